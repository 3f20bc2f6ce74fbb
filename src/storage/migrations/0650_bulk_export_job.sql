-- FHIR Bulk Data export jobs (Bulk Data Access IG v2.0.0, export.html). A job is kicked off on
-- one node, run by whichever worker of any node claims it (FOR UPDATE SKIP LOCKED), and kept
-- alive by that worker's lease: a job whose lease runs out (its worker died) is claimed again
-- and restarted from the beginning. Its files live under CG_EXPORT_DIR, which every node sees.
CREATE TABLE bulk_export_job (
  site_id uuid NOT NULL REFERENCES site (id),
  id uuid NOT NULL,
  -- system: GET /fhir/$export; patient: GET /fhir/Patient/$export (the patient compartment).
  level text NOT NULL CHECK (level IN ('system', 'patient')),
  resource_types text[] NOT NULL,
  since timestamptz,
  output_format text NOT NULL,
  -- The kick-off URL as the client sent it (the manifest's "request").
  request_url text NOT NULL,
  state text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  requested_by_user uuid,
  requested_by_key uuid,
  requested_from text,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  -- The instant the export's snapshot was taken (the manifest's transactionTime).
  transaction_time timestamptz,
  -- Completed jobs and their files are deleted after this (CG_EXPORT_RETENTION_HOURS).
  expires_at timestamptz,
  lease_owner text,
  lease_expires_at timestamptz,
  attempts integer NOT NULL DEFAULT 0,
  -- Resources written so far by the current attempt (X-Progress).
  progress_count bigint NOT NULL DEFAULT 0,
  -- [{type, file, count, bytes}] of a completed job.
  output jsonb NOT NULL DEFAULT '[]',
  error text,
  PRIMARY KEY (site_id, id)
);
-- Workers look for claimable jobs of any site; the partial index holds only unfinished ones.
CREATE INDEX bulk_export_job_claim_idx ON bulk_export_job (site_id, created_at) WHERE state IN ('queued', 'running');
CREATE INDEX bulk_export_job_created_idx ON bulk_export_job (site_id, created_at DESC);
CREATE INDEX bulk_export_job_expiry_idx ON bulk_export_job (site_id, expires_at) WHERE expires_at IS NOT NULL;

-- An export is recorded in the data access log like a search: criteria and counts.
ALTER TABLE data_access_audit DROP CONSTRAINT data_access_audit_interaction_check;
ALTER TABLE data_access_audit ADD CONSTRAINT data_access_audit_interaction_check
  CHECK (interaction IN ('read', 'vread', 'history', 'search', 'view', 'export'));
