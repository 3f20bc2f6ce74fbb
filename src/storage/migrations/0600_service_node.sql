-- The nodes serving this database, one row per node id: a lease kept fresh by a heartbeat. A node
-- recovers the temporary files of its own id in the shared DICOM storage at start, so two running
-- processes with one id would remove each other's transfers: the second is refused while the
-- first's lease is alive.
CREATE TABLE service_node (
  node_id text PRIMARY KEY,
  -- A random id of the process holding the lease: a heartbeat renews only its own lease.
  holder uuid NOT NULL,
  host text NOT NULL,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);
