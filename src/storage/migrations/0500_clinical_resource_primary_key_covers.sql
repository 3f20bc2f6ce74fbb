-- The covering index of 0102 had the primary key's own columns, so every write of a resource
-- maintained two B-trees with the same key. The primary key now is that covering index
-- (seq and last_updated included), and the duplicate is gone. The imaging study's foreign key
-- (0301) depends on the primary key's index, so it is dropped and made again, unchanged.
ALTER TABLE imaging_study DROP CONSTRAINT imaging_study_patient_fkey;
ALTER TABLE clinical_resource DROP CONSTRAINT clinical_resource_pkey;
ALTER TABLE clinical_resource ADD CONSTRAINT clinical_resource_pkey PRIMARY KEY USING INDEX clinical_resource_id_cover;
ALTER TABLE imaging_study
  ADD CONSTRAINT imaging_study_patient_fkey FOREIGN KEY (site_id, patient_resource_type, patient_id)
    REFERENCES clinical_resource (site_id, resource_type, id);
