-- A study's patient is a Patient of the same site in the clinical record store (0100). The
-- constant generated column lets the composite foreign key name the resource type, so the link
-- can only ever point at a Patient of the study's own site.
ALTER TABLE imaging_study
  ADD COLUMN patient_resource_type text GENERATED ALWAYS AS ('Patient') STORED,
  ADD CONSTRAINT imaging_study_patient_fkey FOREIGN KEY (site_id, patient_resource_type, patient_id)
    REFERENCES clinical_resource (site_id, resource_type, id);
