-- Who read which patient's data (issue 26 point 14; HIPAA 164.312(b) audit controls, IHE ATNA):
-- one row per read, vread, history or search over FHIR and per clinical view of the
-- administration app. site_id leads the primary key like every clinical table, so the log
-- distributes with the site's data.
CREATE TABLE data_access_audit (
  site_id uuid NOT NULL REFERENCES site (id),
  id bigint GENERATED ALWAYS AS IDENTITY,
  occurred_at timestamptz NOT NULL,
  -- The API key's owner, or the signed-in user of the administration app.
  user_id uuid,
  key_id uuid,
  remote_address text,
  surface text NOT NULL CHECK (surface IN ('fhir', 'admin')),
  interaction text NOT NULL CHECK (interaction IN ('read', 'vread', 'history', 'search', 'view')),
  resource_type text NOT NULL,
  -- For a search: its criteria as sent (bounded); the ids returned, bounded, and their number.
  query text,
  resource_ids text[] NOT NULL DEFAULT '{}',
  resource_count integer NOT NULL DEFAULT 0,
  patient_ids text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (site_id, id)
);
CREATE INDEX data_access_audit_time_idx ON data_access_audit (site_id, occurred_at);
CREATE INDEX data_access_audit_user_idx ON data_access_audit (site_id, user_id, id) WHERE user_id IS NOT NULL;
CREATE INDEX data_access_audit_key_idx ON data_access_audit (site_id, key_id, id) WHERE key_id IS NOT NULL;
CREATE INDEX data_access_audit_patient_idx ON data_access_audit USING gin (patient_ids);

-- How long the site keeps its data access log. Six years by default: HIPAA's retention period
-- for required documentation (164.316(b)(2)(i)).
ALTER TABLE site ADD COLUMN data_access_retention_days integer NOT NULL DEFAULT 2190
  CHECK (data_access_retention_days BETWEEN 1 AND 36500);
