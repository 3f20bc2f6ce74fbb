-- Activity per sender of every kind (the operations dashboard): which integration client (MLLP)
-- or API key (HTTP) delivered each logged message, and per-minute request and DICOM counters.

-- Filled by the intake from what authenticated the message; messages logged before this
-- migration, refused MLLP messages (no client admitted them) and reprocessed attempts (an
-- operator ran them) have neither. No foreign key: a client or key removed later leaves its
-- messages in the log.
ALTER TABLE inbound_message ADD COLUMN client_id uuid;
ALTER TABLE inbound_message ADD COLUMN api_key_id uuid;

-- Requests per API key (FHIR, HL7 over HTTP, MPPS, DICOMweb) and associations and instances per
-- calling AE title, counted in memory by each process and added here in batches (one upsert per
-- process every few seconds, never a write per request). One row per site, sender, surface and
-- measure per minute; rows older than two days are deleted by the writer (src/domain/activity).
CREATE TABLE traffic_minute (
  site_id uuid NOT NULL REFERENCES site (id) ON DELETE CASCADE,
  minute timestamptz NOT NULL,
  sender_kind text NOT NULL CHECK (sender_kind IN ('api-key', 'ae-title')),
  -- The API key's id, or the calling AE title as sent.
  sender text NOT NULL CHECK (length(sender) BETWEEN 1 AND 64),
  surface text NOT NULL CHECK (surface IN ('fhir', 'hl7', 'mpps', 'dicomweb', 'dicom')),
  -- request (HTTP), association or instance (DICOM).
  measure text NOT NULL CHECK (measure IN ('request', 'association', 'instance')),
  accepted integer NOT NULL DEFAULT 0,
  errored integer NOT NULL DEFAULT 0,
  last_at timestamptz NOT NULL,
  last_error_at timestamptz,
  PRIMARY KEY (site_id, minute, sender_kind, sender, surface, measure)
);
CREATE INDEX traffic_minute_minute_idx ON traffic_minute (minute);

-- Instances stored per calling AE title over the last day read the index by time.
CREATE INDEX imaging_instance_received_idx ON imaging_instance (site_id, received_at);
