-- Data lifecycle: each site may limit how long the message log keeps raw message bodies. The
-- entry, its outcome and its acknowledgement stay; the body becomes NULL and body_purged_at says
-- when (src/domain/retention). NULL retention: bodies are kept (the behaviour before this).
ALTER TABLE site ADD COLUMN message_body_retention_days integer
  CHECK (message_body_retention_days BETWEEN 1 AND 36500);

-- Expand only: nodes of the previous version never write NULL, and read it only for an entry
-- purged by this version.
ALTER TABLE inbound_message ALTER COLUMN raw DROP NOT NULL;
ALTER TABLE inbound_message ADD COLUMN body_purged_at timestamptz;
ALTER TABLE inbound_message ADD CONSTRAINT inbound_message_body_or_purge_mark
  CHECK ((raw IS NULL) = (body_purged_at IS NOT NULL)) NOT VALID;

-- The purge's batches walk the bodies still kept, oldest first; purged entries leave the index,
-- so each batch costs what it purges, not what was purged before.
CREATE INDEX inbound_message_body_kept_idx ON inbound_message (site_id, seq) WHERE body_purged_at IS NULL;

-- Each site's storage use, computed by the background job (counting every row of big tables on
-- each request would cost too much) and shown by the admin app and `site usage`.
CREATE TABLE site_storage_usage (
  site_id uuid NOT NULL REFERENCES site (id) ON DELETE CASCADE,
  -- A table name, or 'dicom-files' for the stored DICOM instances.
  item text NOT NULL,
  row_count bigint NOT NULL,
  bytes bigint NOT NULL,
  computed_at timestamptz NOT NULL,
  PRIMARY KEY (site_id, item)
);
