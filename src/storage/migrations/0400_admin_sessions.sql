-- Sessions of the administration app and its sign-in throttle. Neither is clinical data: a
-- session belongs to a user (whose site, if any, is on app_user), so no site_id key here.

-- A session id is 256 random bits held only by the browser (HttpOnly cookie); the server keeps
-- its SHA-256, so a leaked table cannot be replayed as cookies.
CREATE TABLE admin_session (
  id_hash bytea PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES app_user (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  -- Absolute end; the idle limit is checked against last_seen_at.
  expires_at timestamptz NOT NULL,
  remote_address text,
  user_agent text
);
CREATE INDEX admin_session_user_idx ON admin_session (user_id);
CREATE INDEX admin_session_expires_idx ON admin_session (expires_at);

-- Failed sign-ins per account (lower-cased e-mail) and per client address, in fixed windows.
-- In the database rather than in memory so that the limit holds across restarts and processes.
CREATE TABLE admin_sign_in_throttle (
  scope text NOT NULL CHECK (scope IN ('account', 'address')),
  subject text NOT NULL,
  window_started_at timestamptz NOT NULL DEFAULT now(),
  failures integer NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, subject)
);
