-- Clinical reads from the command line (a study's detail, a patient search or chart, a message's
-- text) are recorded in the data access log like the administration app's: the surface check
-- admits the CLI. Widening a check only expands: the previous version never writes 'cli'.
ALTER TABLE data_access_audit DROP CONSTRAINT data_access_audit_surface_check;
ALTER TABLE data_access_audit ADD CONSTRAINT data_access_audit_surface_check CHECK (surface IN ('fhir', 'admin', 'dicomweb', 'cli'));
