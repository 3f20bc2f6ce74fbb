-- Service-administrator automation tokens: a script's credential for the admin JSON API
-- (Authorization: Bearer). Like API keys, only a SHA-256 of the secret is kept, the prefix finds
-- the row, and every change that could alter an authentication decision notifies the
-- credentials_changed channel at commit so that every process drops what it cached at once.
CREATE TABLE automation_token (
  id uuid PRIMARY KEY,
  prefix text NOT NULL UNIQUE,
  secret_hash bytea NOT NULL,
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  CHECK (expires_at IS NULL OR expires_at > created_at)
);

-- Inserts too: processes remember prefixes that matched nothing.
CREATE TRIGGER automation_token_credentials_changed
  AFTER INSERT OR UPDATE OF prefix, secret_hash, revoked_at, expires_at OR DELETE ON automation_token
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
