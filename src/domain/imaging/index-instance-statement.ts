import type { SiteContext } from '../site-context.ts';
import type { NormalizedInstance } from './received-instance.ts';

/**
 * The index rows of one new instance in a single statement: claim the SOP Instance UID, then
 * upsert the study, then the series. Each step selects from the previous one, which fixes their
 * order whatever the plan: the claim's wait on the unique index comes first (a concurrent store of
 * the same UID waits until this transaction commits, then finds its row, or rolls back, then
 * proceeds), a duplicate (no claimed row) writes nothing else, and concurrent stores of one study
 * lock its study row, then its series row, always in that order. The instance's foreign keys are
 * deferred to commit (migration 0303); the series row's reference to its study is checked at the
 * end of the statement, when both exist.
 *
 * Study-level attributes come from the first instance; later instances only fill what is still
 * empty, so a study's identity never drifts between instances. Modalities accumulate.
 *
 * No row when the site already has the UID; otherwise one: the study's patient link and DICOM
 * PatientID, and the study the series belongs to (PS3.3 C.7.3.1: exactly one, which need not be
 * this instance's study).
 */
export const indexInstanceStatement = `
WITH claim AS (
  INSERT INTO imaging_instance (site_id, sop_instance_uid, id, study_instance_uid, series_instance_uid,
    sop_class_uid, transfer_syntax_uid, instance_number, storage_path, size_bytes, sha256,
    calling_ae_title, remote_address)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
  ON CONFLICT (site_id, sop_instance_uid) DO NOTHING
  RETURNING site_id
), study AS (
  INSERT INTO imaging_study AS s (site_id, study_instance_uid, dicom_patient_id, patient_name, patient_birth_date,
    patient_sex, study_date, study_time, accession_number, study_description, modalities)
  SELECT claim.site_id, $4, $14::text, $15::text, $16::date, $17::text, $18::date, $19::time, $20::text, $21::text,
    CASE WHEN $22::text IS NULL THEN '{}'::text[] ELSE ARRAY[$22::text] END
  FROM claim
  ON CONFLICT (site_id, study_instance_uid) DO UPDATE SET
    dicom_patient_id = COALESCE(s.dicom_patient_id, EXCLUDED.dicom_patient_id),
    patient_name = COALESCE(s.patient_name, EXCLUDED.patient_name),
    patient_birth_date = COALESCE(s.patient_birth_date, EXCLUDED.patient_birth_date),
    patient_sex = COALESCE(s.patient_sex, EXCLUDED.patient_sex),
    study_date = COALESCE(s.study_date, EXCLUDED.study_date),
    study_time = COALESCE(s.study_time, EXCLUDED.study_time),
    accession_number = COALESCE(s.accession_number, EXCLUDED.accession_number),
    study_description = COALESCE(s.study_description, EXCLUDED.study_description),
    modalities = CASE WHEN $22::text IS NULL OR $22::text = ANY (s.modalities) THEN s.modalities
                      ELSE array_append(s.modalities, $22::text) END,
    last_received_at = now(),
    updated_at = now()
  WHERE s.site_id = $1
  RETURNING site_id, patient_id, dicom_patient_id
), series AS (
  INSERT INTO imaging_series AS s (site_id, series_instance_uid, study_instance_uid, modality, series_number, series_description)
  SELECT study.site_id, $5, $4, $22::text, $23::integer, $24::text
  FROM study
  ON CONFLICT (site_id, series_instance_uid) DO UPDATE SET
    modality = COALESCE(s.modality, EXCLUDED.modality),
    series_number = COALESCE(s.series_number, EXCLUDED.series_number),
    series_description = COALESCE(s.series_description, EXCLUDED.series_description)
  WHERE s.site_id = $1
  RETURNING study_instance_uid
)
SELECT study.patient_id, study.dicom_patient_id, series.study_instance_uid AS series_study_instance_uid
FROM study CROSS JOIN series`;

export interface IndexInstanceRow {
  patient_id: string | null;
  dicom_patient_id: string | null;
  series_study_instance_uid: string;
}

export function indexInstanceValues(site: SiteContext, id: string, value: NormalizedInstance): unknown[] {
  return [
    site.siteId, value.sopInstanceUid, id, value.studyInstanceUid, value.seriesInstanceUid, value.sopClassUid,
    value.transferSyntaxUid, value.instanceNumber, value.storagePath, value.sizeBytes, value.sha256,
    value.callingAeTitle, value.remoteAddress,
    value.patientId, value.patientName, value.patientBirthDate, value.patientSex, value.studyDate, value.studyTime,
    value.accessionNumber, value.studyDescription, value.modality, value.seriesNumber, value.seriesDescription,
  ];
}
