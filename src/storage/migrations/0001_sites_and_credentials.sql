-- Sites, people and credentials. The site table is the reference table of a distributed
-- deployment (Citus): every clinical table carries site_id first in its primary key.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE site (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
  ae_title text NOT NULL,
  patient_put_creates boolean NOT NULL DEFAULT false,
  mllp_allow_any_ip boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX site_name_key ON site (lower(name));
CREATE UNIQUE INDEX site_ae_title_key ON site (ae_title);

CREATE TABLE app_user (
  id uuid PRIMARY KEY,
  site_id uuid REFERENCES site (id),
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('service-admin', 'site-admin', 'clinician')),
  password_hash text,
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT app_user_site_matches_role CHECK ((role = 'service-admin') = (site_id IS NULL))
);
CREATE UNIQUE INDEX app_user_email_key ON app_user (lower(email));
CREATE INDEX app_user_site_idx ON app_user (site_id);

CREATE TABLE api_key (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES site (id),
  user_id uuid NOT NULL REFERENCES app_user (id),
  prefix text NOT NULL,
  secret_hash bytea NOT NULL,
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX api_key_prefix_key ON api_key (prefix);
CREATE INDEX api_key_site_idx ON api_key (site_id);

CREATE TABLE integration_client (
  id uuid PRIMARY KEY,
  site_id uuid NOT NULL REFERENCES site (id),
  name text NOT NULL,
  protocol text NOT NULL CHECK (protocol IN ('hl7-mllp')),
  allowed_ips text[] NOT NULL,
  sending_application text,
  sending_facility text,
  default_charset text NOT NULL DEFAULT 'UNICODE UTF-8',
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX integration_client_name_key ON integration_client (site_id, lower(name));

-- Who did what, for every administrative action (CLI and administration app alike).
CREATE TABLE audit_event (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  occurred_at timestamptz NOT NULL DEFAULT now(),
  site_id uuid REFERENCES site (id),
  actor text NOT NULL,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text,
  details jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_event_site_idx ON audit_event (site_id, occurred_at DESC);
