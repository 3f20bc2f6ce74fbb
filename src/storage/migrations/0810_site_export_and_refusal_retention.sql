-- Data lifecycle: each site may say how long its Bulk Data export files are kept (null: the
-- service-wide CG_EXPORT_RETENTION_HOURS) and how long its refused-traffic records are kept
-- (null: the recorder's service default, 30 days). Expand only: nodes of the previous version
-- do not read these columns and keep applying the service-wide values.
ALTER TABLE site ADD COLUMN export_retention_hours integer
  CHECK (export_retention_hours BETWEEN 1 AND 8760);
ALTER TABLE site ADD COLUMN refused_traffic_retention_days integer
  CHECK (refused_traffic_retention_days BETWEEN 1 AND 3650);

-- The lifecycle job deletes one site's oldest refused-traffic rows in batches.
CREATE INDEX refused_traffic_site_occurred_idx ON refused_traffic (site_id, occurred_at);
