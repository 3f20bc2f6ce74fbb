-- Imaging: the study / series / instance index written by the DICOM listener, modality performed
-- procedure steps (MPPS over HTTP and DIMSE) and the site's internal imaging reports.
-- Every table is site-scoped with site_id first in its primary key, so each can become a Citus
-- table distributed by site_id; no foreign key or query spans two sites.

-- A study exists only once an instance of it has been stored (DESIGN.md: studies reach the
-- worklist only through the DICOM path). Study-level attributes are those of the first instance;
-- later instances fill attributes that are still empty.
CREATE TABLE imaging_study (
  site_id uuid NOT NULL REFERENCES site (id),
  study_instance_uid text NOT NULL CHECK (length(study_instance_uid) BETWEEN 1 AND 64),
  -- The site's patient whose business identifier equals the DICOM PatientID (0010,0020).
  patient_id uuid,
  dicom_patient_id text,
  patient_name text,
  patient_birth_date date,
  patient_sex text CHECK (patient_sex IN ('M', 'F', 'O')),
  study_date date,
  study_time time,
  accession_number text,
  study_description text,
  modalities text[] NOT NULL DEFAULT '{}',
  first_received_at timestamptz NOT NULL DEFAULT now(),
  last_received_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, study_instance_uid)
);
-- Worklist order and date-range filter.
CREATE INDEX imaging_study_date_idx ON imaging_study (site_id, study_date DESC NULLS LAST, study_time DESC NULLS LAST);
CREATE INDEX imaging_study_patient_idx ON imaging_study (site_id, patient_id);
CREATE INDEX imaging_study_dicom_patient_idx ON imaging_study (site_id, dicom_patient_id);
CREATE INDEX imaging_study_patient_name_trgm_idx ON imaging_study USING gin (lower(patient_name) gin_trgm_ops);
CREATE INDEX imaging_study_modalities_idx ON imaging_study USING gin (modalities);

CREATE TABLE imaging_series (
  site_id uuid NOT NULL,
  series_instance_uid text NOT NULL CHECK (length(series_instance_uid) BETWEEN 1 AND 64),
  study_instance_uid text NOT NULL,
  modality text,
  series_number integer,
  series_description text,
  first_received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, series_instance_uid),
  FOREIGN KEY (site_id, study_instance_uid) REFERENCES imaging_study (site_id, study_instance_uid)
);
CREATE INDEX imaging_series_study_idx ON imaging_series (site_id, study_instance_uid);

CREATE TABLE imaging_instance (
  site_id uuid NOT NULL,
  sop_instance_uid text NOT NULL CHECK (length(sop_instance_uid) BETWEEN 1 AND 64),
  id uuid NOT NULL,
  study_instance_uid text NOT NULL,
  series_instance_uid text NOT NULL,
  sop_class_uid text NOT NULL,
  transfer_syntax_uid text NOT NULL,
  instance_number integer,
  -- Relative to the data directory; the file holds the dataset bytes exactly as received.
  storage_path text NOT NULL,
  size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  calling_ae_title text,
  remote_address text,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (site_id, sop_instance_uid),
  UNIQUE (site_id, id),
  FOREIGN KEY (site_id, series_instance_uid) REFERENCES imaging_series (site_id, series_instance_uid),
  FOREIGN KEY (site_id, study_instance_uid) REFERENCES imaging_study (site_id, study_instance_uid)
);
CREATE INDEX imaging_instance_study_idx ON imaging_instance (site_id, study_instance_uid);
CREATE INDEX imaging_instance_series_idx ON imaging_instance (site_id, series_instance_uid);

-- Modality Performed Procedure Step (PS3.4 annex F), keyed by its SOP Instance UID. It references
-- its study by UID only, without a foreign key: the step may arrive before the images.
CREATE TABLE imaging_procedure_step (
  site_id uuid NOT NULL REFERENCES site (id),
  sop_instance_uid text NOT NULL CHECK (length(sop_instance_uid) BETWEEN 1 AND 64),
  study_instance_uid text NOT NULL CHECK (length(study_instance_uid) BETWEEN 1 AND 64),
  status text NOT NULL CHECK (status IN ('IN PROGRESS', 'COMPLETED', 'DISCONTINUED')),
  modality text,
  station_ae_title text,
  started_at timestamptz,
  ended_at timestamptz,
  procedure_code_value text,
  procedure_coding_scheme text,
  procedure_code_meaning text,
  source text NOT NULL CHECK (source IN ('http', 'dimse', 'operator')),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  PRIMARY KEY (site_id, sop_instance_uid)
);
CREATE INDEX imaging_procedure_step_study_idx ON imaging_procedure_step (site_id, study_instance_uid);

-- The site's internal imaging reports: draft, then completed (text frozen from then on).
-- The report's patient is its study's patient, so a merge that moves the study moves the report.
CREATE TABLE imaging_report (
  site_id uuid NOT NULL,
  id uuid NOT NULL,
  study_instance_uid text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'completed')),
  text text NOT NULL,
  author_user_id uuid REFERENCES app_user (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  version integer NOT NULL DEFAULT 1,
  PRIMARY KEY (site_id, id),
  FOREIGN KEY (site_id, study_instance_uid) REFERENCES imaging_study (site_id, study_instance_uid),
  CONSTRAINT imaging_report_completion CHECK ((status = 'completed') = (completed_at IS NOT NULL))
);
CREATE INDEX imaging_report_study_idx ON imaging_report (site_id, study_instance_uid);
CREATE INDEX imaging_report_status_idx ON imaging_report (site_id, status);
