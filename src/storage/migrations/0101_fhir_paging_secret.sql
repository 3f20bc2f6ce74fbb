-- The key that signs FHIR search paging tokens. Kept in the database so that every process of a
-- deployment, and the next start, accept the tokens the others issued. Not clinical data: one row.
CREATE TABLE fhir_paging_secret (
  id smallint PRIMARY KEY CHECK (id = 1),
  secret bytea NOT NULL CHECK (length(secret) >= 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
