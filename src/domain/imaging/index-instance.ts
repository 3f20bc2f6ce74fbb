/**
 * Indexes one stored DICOM instance: study, series and instance rows of the caller's site, and the
 * study's link to the site's patient (issue 5 point 3). Called by the C-STORE handler inside the
 * transaction that makes the instance visible, after the file is fsynced and renamed into place.
 *
 * Duplicate policy for a known SOP Instance UID (PS3.4 B.2.3 leaves it to the SCP):
 * - same dataset bytes (SHA-256): success, nothing changes ('duplicate-identical');
 * - different bytes: the first instance is kept and the new one refused ('duplicate-different'),
 *   as dcm4chee-arc does by default: silently replacing a stored image could change what a
 *   report was written on. The listener answers a DIMSE failure and removes its new file.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import { cleanText } from './dicom-values.ts';
import { normalizeReceivedInstance, type NormalizedInstance, type ReceivedInstance } from './received-instance.ts';
import { linkStudyPatient } from './study-patient.ts';

export type { ReceivedInstance } from './received-instance.ts';

export type IndexOutcome = 'stored' | 'duplicate-identical' | 'duplicate-different';

export interface IndexResult {
  outcome: IndexOutcome;
  /** The indexed instance's id: the new one when stored, the first one for a duplicate. */
  instanceId: string;
  /** Where the kept instance's file is (relative to the data directory). */
  storagePath: string;
  studyInstanceUid: string;
  /** The study's patient in this site, when there is one. */
  patientId: string | null;
  /** Inconsistencies that did not prevent indexing, for the listener's log. */
  warnings: string[];
}

export interface IndexedInstance {
  id: string;
  sopInstanceUid: string;
  sopClassUid: string;
  transferSyntaxUid: string;
  studyInstanceUid: string;
  seriesInstanceUid: string;
  instanceNumber: number | null;
  storagePath: string;
  sizeBytes: number;
  sha256: string;
  callingAeTitle: string | null;
  remoteAddress: string | null;
  receivedAt: Date;
}

const instanceColumns = `id, sop_instance_uid, sop_class_uid, transfer_syntax_uid, study_instance_uid,
  series_instance_uid, instance_number, storage_path, size_bytes, sha256, calling_ae_title,
  remote_address, received_at`;

export async function indexInstance(tx: Transaction, site: SiteContext, instance: ReceivedInstance): Promise<IndexResult> {
  const value = normalizeReceivedInstance(instance);
  // Claim the SOP Instance UID first. A concurrent store of the same UID waits on the unique
  // index until the first commits (then finds its row) or rolls back (then this one proceeds).
  // The instance's foreign keys are deferred to commit (migration 0303), by which time this
  // transaction has written the study and series rows below.
  const id = randomUUID();
  const claimed = await tx.query({
    name: 'imaging-instance-claim',
    text: `INSERT INTO imaging_instance (site_id, sop_instance_uid, id, study_instance_uid, series_instance_uid,
             sop_class_uid, transfer_syntax_uid, instance_number, storage_path, size_bytes, sha256,
             calling_ae_title, remote_address)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
           ON CONFLICT (site_id, sop_instance_uid) DO NOTHING`,
    values: [
      site.siteId, value.sopInstanceUid, id, value.studyInstanceUid, value.seriesInstanceUid, value.sopClassUid,
      value.transferSyntaxUid, value.instanceNumber, value.storagePath, value.sizeBytes, value.sha256,
      value.callingAeTitle, value.remoteAddress,
    ],
  });
  if (claimed.rowCount === 0) return duplicateOf(tx, site, value);

  const warnings: string[] = [];
  const study = await upsertStudy(tx, site, value);
  if (value.patientId !== null && study.dicomPatientId !== null && study.dicomPatientId !== value.patientId) {
    warnings.push(`study ${value.studyInstanceUid} is indexed under PatientID ${study.dicomPatientId}; this instance says ${value.patientId}`);
  }
  let patientId = study.patientId;
  if (patientId === null && study.dicomPatientId !== null) {
    patientId = await linkStudyPatient(tx, site, value.studyInstanceUid, { ...value, patientId: study.dicomPatientId });
  }
  await upsertSeries(tx, site, value);
  return { outcome: 'stored', instanceId: id, storagePath: value.storagePath, studyInstanceUid: value.studyInstanceUid, patientId, warnings };
}

/** The SOP Instance UID is already indexed in this site: compare bytes, change nothing. */
async function duplicateOf(tx: Transaction, site: SiteContext, value: NormalizedInstance): Promise<IndexResult> {
  const { rows } = await tx.query<{ id: string; storage_path: string; sha256: string; study_instance_uid: string; patient_id: string | null }>({
    name: 'imaging-instance-duplicate',
    text: `SELECT i.id, i.storage_path, i.sha256, i.study_instance_uid, s.patient_id
           FROM imaging_instance i
           LEFT JOIN imaging_study s ON s.site_id = i.site_id AND s.study_instance_uid = i.study_instance_uid
           WHERE i.site_id = $1 AND i.sop_instance_uid = $2`,
    values: [site.siteId, value.sopInstanceUid],
  });
  const existing = rows[0];
  // The conflicting row is committed, or this transaction's own: either way this statement sees it.
  if (!existing) throw new Error(`SOP Instance ${value.sopInstanceUid} conflicted but cannot be read`);
  return {
    outcome: existing.sha256 === value.sha256 ? 'duplicate-identical' : 'duplicate-different',
    instanceId: existing.id,
    storagePath: existing.storage_path,
    studyInstanceUid: existing.study_instance_uid,
    patientId: existing.patient_id,
    warnings: [],
  };
}

/**
 * Study-level attributes come from the first instance; later instances only fill what is still
 * empty, so a study's identity never drifts between instances. Modalities accumulate.
 */
async function upsertStudy(
  tx: Transaction,
  site: SiteContext,
  value: NormalizedInstance,
): Promise<{ patientId: string | null; dicomPatientId: string | null }> {
  const { rows } = await tx.query<{ patient_id: string | null; dicom_patient_id: string | null }>({
    name: 'imaging-study-upsert',
    text: `INSERT INTO imaging_study AS s (site_id, study_instance_uid, dicom_patient_id, patient_name, patient_birth_date,
             patient_sex, study_date, study_time, accession_number, study_description, modalities)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $11::text IS NULL THEN '{}'::text[] ELSE ARRAY[$11::text] END)
           ON CONFLICT (site_id, study_instance_uid) DO UPDATE SET
             dicom_patient_id = COALESCE(s.dicom_patient_id, EXCLUDED.dicom_patient_id),
             patient_name = COALESCE(s.patient_name, EXCLUDED.patient_name),
             patient_birth_date = COALESCE(s.patient_birth_date, EXCLUDED.patient_birth_date),
             patient_sex = COALESCE(s.patient_sex, EXCLUDED.patient_sex),
             study_date = COALESCE(s.study_date, EXCLUDED.study_date),
             study_time = COALESCE(s.study_time, EXCLUDED.study_time),
             accession_number = COALESCE(s.accession_number, EXCLUDED.accession_number),
             study_description = COALESCE(s.study_description, EXCLUDED.study_description),
             modalities = CASE WHEN $11::text IS NULL OR $11::text = ANY (s.modalities) THEN s.modalities
                               ELSE array_append(s.modalities, $11::text) END,
             last_received_at = now(),
             updated_at = now()
           WHERE s.site_id = $1
           RETURNING patient_id, dicom_patient_id`,
    values: [
      site.siteId, value.studyInstanceUid, value.patientId, value.patientName, value.patientBirthDate, value.patientSex,
      value.studyDate, value.studyTime, value.accessionNumber, value.studyDescription, value.modality,
    ],
  });
  const row = rows[0]!;
  return { patientId: row.patient_id, dicomPatientId: row.dicom_patient_id };
}

async function upsertSeries(tx: Transaction, site: SiteContext, value: NormalizedInstance): Promise<void> {
  const { rows } = await tx.query<{ study_instance_uid: string }>({
    name: 'imaging-series-upsert',
    text: `INSERT INTO imaging_series AS s (site_id, series_instance_uid, study_instance_uid, modality, series_number, series_description)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (site_id, series_instance_uid) DO UPDATE SET
             modality = COALESCE(s.modality, EXCLUDED.modality),
             series_number = COALESCE(s.series_number, EXCLUDED.series_number),
             series_description = COALESCE(s.series_description, EXCLUDED.series_description)
           WHERE s.site_id = $1
           RETURNING study_instance_uid`,
    values: [site.siteId, value.seriesInstanceUid, value.studyInstanceUid, value.modality, value.seriesNumber, value.seriesDescription],
  });
  const owner = rows[0]?.study_instance_uid;
  // PS3.3 C.7.3.1: a series belongs to exactly one study. An instance claiming otherwise is
  // inconsistent, and indexing it would put its images under the wrong study.
  if (owner !== value.studyInstanceUid) {
    throw new DomainError('invalid', `series ${value.seriesInstanceUid} belongs to study ${owner ?? '?'}, not ${value.studyInstanceUid}`, [
      { message: `series ${value.seriesInstanceUid} already belongs to another study`, location: 'seriesInstanceUid' },
    ]);
  }
}

/** The indexed instance of this site with that SOP Instance UID, if any. */
export async function findInstance(db: Queryable, site: SiteContext, sopInstanceUid: string): Promise<IndexedInstance | undefined> {
  const uid = cleanText(sopInstanceUid, 128);
  if (!uid) return undefined;
  const { rows } = await db.query({
    name: 'imaging-instance-find',
    text: `SELECT ${instanceColumns} FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2`,
    values: [site.siteId, uid],
  });
  const row = rows[0];
  return row ? toInstance(row) : undefined;
}

export function toInstance(row: Record<string, any>): IndexedInstance {
  return {
    id: row.id,
    sopInstanceUid: row.sop_instance_uid,
    sopClassUid: row.sop_class_uid,
    transferSyntaxUid: row.transfer_syntax_uid,
    studyInstanceUid: row.study_instance_uid,
    seriesInstanceUid: row.series_instance_uid,
    instanceNumber: row.instance_number,
    storagePath: row.storage_path,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    callingAeTitle: row.calling_ae_title,
    remoteAddress: row.remote_address,
    receivedAt: row.received_at,
  };
}
