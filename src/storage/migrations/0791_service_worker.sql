-- The serving processes of each node (one, or CG_WORKERS workers), each with a heartbeat, so
-- that the activity dashboard shows how many are up. A few rows, about the service, not any site.
-- A worker's row is removed when it stops; a row whose heartbeat is older than 30 s belongs to a
-- process that died (its supervisor starts a replacement, which takes the same row).
CREATE TABLE service_worker (
  node_id text NOT NULL,
  -- 0 for a single serving process, else the worker's number (1..CG_WORKERS).
  worker integer NOT NULL CHECK (worker >= 0),
  pid integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (node_id, worker)
);
