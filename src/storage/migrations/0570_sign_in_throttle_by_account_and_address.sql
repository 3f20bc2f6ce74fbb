-- Sign-in attempts are counted per account and address together (a stranger's guesses do not lock
-- the owner out of their own address), per address, and per account from every address at a far
-- higher limit; addresses an account signed in from are remembered so that the account-wide limit
-- never shuts the owner out of an address they use (issue 26 points 4 and 8).
ALTER TABLE admin_sign_in_throttle DROP CONSTRAINT admin_sign_in_throttle_scope_check;
DELETE FROM admin_sign_in_throttle;
ALTER TABLE admin_sign_in_throttle ADD CONSTRAINT admin_sign_in_throttle_scope_check
  CHECK (scope IN ('account', 'address', 'account-address', 'known-address'));
CREATE INDEX admin_sign_in_throttle_window_idx ON admin_sign_in_throttle (window_started_at);
