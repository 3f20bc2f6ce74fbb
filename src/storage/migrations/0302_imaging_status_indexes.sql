-- Worklist filters by procedure-step and report status run as semi-joins driven from these
-- tables; with the status before the study UID they are index-only scans of one site's rows.
CREATE INDEX imaging_procedure_step_status_idx ON imaging_procedure_step (site_id, status, study_instance_uid);
CREATE INDEX imaging_report_status_study_idx ON imaging_report (site_id, status, study_instance_uid);
DROP INDEX imaging_report_status_idx;
