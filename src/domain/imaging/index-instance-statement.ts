import type { SiteContext } from '../site-context.ts';
import type { NormalizedInstance } from './received-instance.ts';
import { studyStartedAt } from './study-time.ts';

/**
 * The index rows of one new instance, in one statement (claimAndIndexStatement).
 *
 * It first inserts the instance row, which claims the SOP Instance UID: a concurrent store of the
 * same UID waits on the unique index until this transaction ends, then finds its row or proceeds.
 * Every later step is gated on that claim, so a duplicate writes nothing. The instance's foreign
 * keys are deferred to commit (migration 0303), so its study and series rows may follow.
 *
 * Every instance used to update its study row (last received, modalities), so concurrent stores
 * of one study queued on that row lock until each committed: four associations sending one
 * series stored about half what they store now. So the study and series rows are written only
 * when the instance changes them: a new study or series, an attribute still empty, a modality not
 * yet listed, or a last-received time more than a second old (the worklist's "last received" is
 * to the second). An instance that changes nothing reads the rows and locks nothing. When a row
 * is not there to read (a concurrent first instance of the study committed after the statement's
 * snapshot), the statement reports no study and the caller runs studyAndSeriesStatement, which
 * upserts both rows, waiting for that instance, and always returns them; writers lock a study's
 * row before its series' row, always in that order.
 *
 * Study-level attributes come from the first instance; later instances only fill what is still
 * empty, so a study's identity never drifts between instances. Modalities accumulate. Both
 * statements return the study's patient link and DICOM PatientID, and the study the series belongs
 * to (PS3.3 C.7.3.1: exactly one, which need not be this instance's study).
 */
/** A row changes only when the instance brings something it lacks, or it is a second old. */
const studyChanges = `(s.dicom_patient_id IS NULL AND $3::text IS NOT NULL) OR (s.patient_name IS NULL AND $4::text IS NOT NULL)
    OR (s.patient_birth_date IS NULL AND $5::date IS NOT NULL) OR (s.patient_sex IS NULL AND $6::text IS NOT NULL)
    OR (s.study_date IS NULL AND $7::date IS NOT NULL) OR (s.study_time IS NULL AND $8::time IS NOT NULL)
    OR (s.accession_number IS NULL AND $9::text IS NOT NULL) OR (s.study_description IS NULL AND $10::text IS NOT NULL)
    OR (s.study_started_at IS NULL AND $15::timestamptz IS NOT NULL)
    OR (s.study_id IS NULL AND $16::text IS NOT NULL) OR (s.referring_physician_name IS NULL AND $17::text IS NOT NULL)
    OR ($11::text IS NOT NULL AND NOT $11::text = ANY (s.modalities))
    OR s.last_received_at < now() - interval '1 second'`;

const studyUpdates = `dicom_patient_id = COALESCE(s.dicom_patient_id, EXCLUDED.dicom_patient_id),
    patient_name = COALESCE(s.patient_name, EXCLUDED.patient_name),
    patient_birth_date = COALESCE(s.patient_birth_date, EXCLUDED.patient_birth_date),
    patient_sex = COALESCE(s.patient_sex, EXCLUDED.patient_sex),
    study_date = COALESCE(s.study_date, EXCLUDED.study_date),
    study_time = COALESCE(s.study_time, EXCLUDED.study_time),
    study_started_at = COALESCE(s.study_started_at, EXCLUDED.study_started_at),
    accession_number = COALESCE(s.accession_number, EXCLUDED.accession_number),
    study_description = COALESCE(s.study_description, EXCLUDED.study_description),
    study_id = COALESCE(s.study_id, EXCLUDED.study_id),
    referring_physician_name = COALESCE(s.referring_physician_name, EXCLUDED.referring_physician_name),
    modalities = CASE WHEN $11::text IS NULL OR $11::text = ANY (s.modalities) THEN s.modalities
                      ELSE array_append(s.modalities, $11::text) END,
    last_received_at = now(),
    updated_at = now()`;

const seriesChanges = `(s.modality IS NULL AND $11::text IS NOT NULL) OR (s.series_number IS NULL AND $13::integer IS NOT NULL)
    OR (s.series_description IS NULL AND $14::text IS NOT NULL)`;

const seriesUpdates = `modality = COALESCE(s.modality, EXCLUDED.modality),
    series_number = COALESCE(s.series_number, EXCLUDED.series_number),
    series_description = COALESCE(s.series_description, EXCLUDED.series_description)`;

const studyValues = `$1, $2, $3::text, $4::text, $5::date, $6::text, $7::date, $8::time, $9::text, $10::text,
    CASE WHEN $11::text IS NULL THEN '{}'::text[] ELSE ARRAY[$11::text] END, $15::timestamptz, $16::text, $17::text`;

const newStudy = `INSERT INTO imaging_study AS s (site_id, study_instance_uid, dicom_patient_id, patient_name, patient_birth_date,
    patient_sex, study_date, study_time, accession_number, study_description, modalities, study_started_at, study_id, referring_physician_name)`;

const seriesValues = `$1, $12, $2, $11::text, $13::integer, $14::text`;

const newSeries = `INSERT INTO imaging_series AS s (site_id, series_instance_uid, study_instance_uid, modality, series_number, series_description)`;

const claimed = 'EXISTS (SELECT FROM claim)';

export const claimAndIndexStatement = `
WITH claim AS (
  INSERT INTO imaging_instance (site_id, sop_instance_uid, id, study_instance_uid, series_instance_uid,
    sop_class_uid, transfer_syntax_uid, instance_number, storage_path, size_bytes, sha256,
    calling_ae_title, remote_address)
  VALUES ($1, $18, $19, $2, $12, $20, $21, $22, $23, $24, $25, $26, $27)
  ON CONFLICT (site_id, sop_instance_uid) DO NOTHING
  RETURNING site_id
), study_inserted AS (
  ${newStudy}
  SELECT ${studyValues} WHERE ${claimed}
  ON CONFLICT (site_id, study_instance_uid) DO NOTHING
  RETURNING patient_id, dicom_patient_id
), study_updated AS (
  UPDATE imaging_study AS s SET ${studyUpdates.replaceAll('EXCLUDED.', 'incoming.')}
  FROM (SELECT $3::text AS dicom_patient_id, $4::text AS patient_name, $5::date AS patient_birth_date, $6::text AS patient_sex,
               $7::date AS study_date, $8::time AS study_time, $9::text AS accession_number, $10::text AS study_description,
               $15::timestamptz AS study_started_at, $16::text AS study_id, $17::text AS referring_physician_name) AS incoming
  WHERE s.site_id = $1 AND s.study_instance_uid = $2 AND ${claimed} AND NOT EXISTS (SELECT FROM study_inserted)
    AND (${studyChanges})
  RETURNING s.patient_id, s.dicom_patient_id
), study AS (
  SELECT patient_id, dicom_patient_id FROM study_inserted
  UNION ALL SELECT patient_id, dicom_patient_id FROM study_updated
  UNION ALL SELECT patient_id, dicom_patient_id FROM imaging_study
    WHERE site_id = $1 AND study_instance_uid = $2 AND ${claimed}
      AND NOT EXISTS (SELECT FROM study_inserted) AND NOT EXISTS (SELECT FROM study_updated)
), series_inserted AS (
  ${newSeries}
  SELECT ${seriesValues} WHERE ${claimed}
  ON CONFLICT (site_id, series_instance_uid) DO NOTHING
  RETURNING study_instance_uid
), series_updated AS (
  UPDATE imaging_series AS s SET ${seriesUpdates.replaceAll('EXCLUDED.', 'incoming.')}
  FROM (SELECT $11::text AS modality, $13::integer AS series_number, $14::text AS series_description) AS incoming
  WHERE s.site_id = $1 AND s.series_instance_uid = $12 AND ${claimed} AND NOT EXISTS (SELECT FROM series_inserted)
    AND (${seriesChanges})
  RETURNING s.study_instance_uid
), series AS (
  SELECT study_instance_uid FROM series_inserted
  UNION ALL SELECT study_instance_uid FROM series_updated
  UNION ALL SELECT study_instance_uid FROM imaging_series
    WHERE site_id = $1 AND series_instance_uid = $12 AND ${claimed}
      AND NOT EXISTS (SELECT FROM series_inserted) AND NOT EXISTS (SELECT FROM series_updated)
)
SELECT ${claimed} AS claimed, (SELECT count(*) FROM study)::int AS studies,
  study.patient_id, study.dicom_patient_id, series.study_instance_uid AS series_study_instance_uid
FROM (SELECT) AS statement LEFT JOIN study ON true LEFT JOIN series ON true`;

export const studyAndSeriesStatement = `
WITH study AS (
  ${newStudy}
  VALUES (${studyValues})
  ON CONFLICT (site_id, study_instance_uid) DO UPDATE SET ${studyUpdates}
  WHERE s.site_id = $1
  RETURNING site_id, patient_id, dicom_patient_id
), series AS (
  INSERT INTO imaging_series AS s (site_id, series_instance_uid, study_instance_uid, modality, series_number, series_description)
  SELECT study.site_id, $12, $2, $11::text, $13::integer, $14::text
  FROM study
  ON CONFLICT (site_id, series_instance_uid) DO UPDATE SET ${seriesUpdates}
  WHERE s.site_id = $1
  RETURNING study_instance_uid
)
SELECT study.patient_id, study.dicom_patient_id, series.study_instance_uid AS series_study_instance_uid
FROM study CROSS JOIN series`;

/** The claim and the rows, or claimed false for a duplicate; studies 0 when the fallback is needed. */
export interface ClaimAndIndexRow extends Partial<StudyAndSeriesRow> {
  claimed: boolean;
  studies: number;
}

export interface StudyAndSeriesRow {
  patient_id: string | null;
  dicom_patient_id: string | null;
  series_study_instance_uid: string;
}

export function studyAndSeriesValues(site: SiteContext, value: NormalizedInstance): unknown[] {
  return [
    site.siteId, value.studyInstanceUid,
    value.patientId, value.patientName, value.patientBirthDate, value.patientSex, value.studyDate, value.studyTime,
    value.accessionNumber, value.studyDescription, value.modality,
    value.seriesInstanceUid, value.seriesNumber, value.seriesDescription,
    studyStartedAt(value.studyDate, value.studyTime, value.timezoneOffsetFromUtc ?? undefined, site.timeZone),
    value.studyId, value.referringPhysicianName,
  ];
}

/** studyAndSeriesValues, then the instance's own ($18 on). */
export function claimAndIndexValues(site: SiteContext, id: string, value: NormalizedInstance): unknown[] {
  return [
    ...studyAndSeriesValues(site, value),
    value.sopInstanceUid, id, value.sopClassUid, value.transferSyntaxUid, value.instanceNumber, value.storagePath,
    value.sizeBytes, value.sha256, value.callingAeTitle, value.remoteAddress,
  ];
}
