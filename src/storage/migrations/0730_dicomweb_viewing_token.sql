-- Short-lived, read-only DICOMweb tokens that the administration app hands to a signed-in user's
-- browser so that its image viewer reads the DICOMweb origin with that user's rights, for one
-- site. Like a session id, the token is 256 random bits held only by the browser; the server keeps
-- its SHA-256. A token belongs to the admin session that asked for it and goes with it: signing
-- out, the idle or absolute end of the session and a password change (which ends the user's
-- other sessions) all revoke it through the cascade.
CREATE TABLE dicomweb_viewing_token (
  token_hash bytea PRIMARY KEY,
  session_id_hash bytea NOT NULL REFERENCES admin_session (id_hash) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES app_user (id),
  site_id uuid NOT NULL REFERENCES site (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX dicomweb_viewing_token_session_idx ON dicomweb_viewing_token (session_id_hash);
CREATE INDEX dicomweb_viewing_token_expires_idx ON dicomweb_viewing_token (expires_at);
