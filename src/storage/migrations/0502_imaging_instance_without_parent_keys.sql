-- An instance row is written only by the claim statement of src/domain/imaging, whose transaction
-- commits only once the same statement, or the upsert that follows it, has returned the
-- instance's study and series rows, with the series belonging to that study (index-instance.ts);
-- the series keeps its own key to the study, and no study or series row is ever deleted. The
-- instance's two deferred keys checked the same rows again at commit, each taking a KEY SHARE
-- lock on a study and a series row that every concurrent store of the series also locks: measured
-- side by side, storing without them gave 1.09x the instances a second at one and at four
-- associations, with less PostgreSQL CPU per instance (docs/architecture.md).
ALTER TABLE imaging_instance
  DROP CONSTRAINT imaging_instance_site_id_series_instance_uid_fkey,
  DROP CONSTRAINT imaging_instance_site_id_study_instance_uid_fkey;
