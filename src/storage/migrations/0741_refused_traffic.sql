-- Traffic the service refused before it reached a site's data: MLLP connections from addresses
-- no integration client admits, MLLP messages whose MSH-3/MSH-4 match no client, DICOM
-- associations rejected (unknown called AE title, unsupported protocol), HTTP requests with an
-- unknown or revoked API key (by key prefix, never the secret).
--
-- Bounded by construction (src/domain/refused-traffic): one row per site, surface, kind and
-- address per minute, later events of that minute only counted in `suppressed`; rows older than
-- the retention, and rows beyond the row cap, are deleted by the recorder as it writes.
CREATE TABLE refused_traffic (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The site concerned when one is known (a revoked key's site, an MLLP address registered for
  -- one site, ...); null when none is (visible to service administrators only).
  site_id uuid REFERENCES site (id) ON DELETE CASCADE,
  surface text NOT NULL CHECK (surface IN ('mllp', 'dicom', 'http')),
  kind text NOT NULL,
  remote_address text NOT NULL,
  reason text NOT NULL,
  -- Protocol details that help an operator: MSH-3/MSH-4 and MSH-10, calling and called AE
  -- titles, the key prefix, the HTTP origin. Never a secret.
  details jsonb NOT NULL DEFAULT '{}',
  occurred_at timestamptz NOT NULL DEFAULT now(),
  -- Events of the same site, surface, kind and address within the same minute that were counted
  -- here instead of being written as rows of their own.
  suppressed integer NOT NULL DEFAULT 0,
  last_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refused_traffic_site_idx ON refused_traffic (site_id, id);
CREATE INDEX refused_traffic_occurred_idx ON refused_traffic (occurred_at);
