-- DICOMweb retrievals (WADO-RS) and searches (QIDO-RS) are recorded in the data access log like
-- FHIR reads: the surface check admits the DICOMweb origin.
ALTER TABLE data_access_audit DROP CONSTRAINT data_access_audit_surface_check;
ALTER TABLE data_access_audit ADD CONSTRAINT data_access_audit_surface_check CHECK (surface IN ('fhir', 'admin', 'dicomweb'));
