-- indexInstance claims the SOP Instance UID first (INSERT … ON CONFLICT DO NOTHING: the unique
-- index both detects a duplicate and makes a concurrent store of the same UID wait), and only
-- then writes the study and series rows. The instance's references are therefore checked at
-- commit, when both rows exist in the same transaction.
ALTER TABLE imaging_instance
  ALTER CONSTRAINT imaging_instance_site_id_series_instance_uid_fkey DEFERRABLE INITIALLY DEFERRED,
  ALTER CONSTRAINT imaging_instance_site_id_study_instance_uid_fkey DEFERRABLE INITIALLY DEFERRED;
