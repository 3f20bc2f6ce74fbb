/**
 * Indexes one stored DICOM instance: study, series and instance rows of the caller's site, and the
 * study's link to the site's patient (issue 5 point 3). Called by the C-STORE handler inside the
 * transaction that makes the instance visible; the handler moves the file into place after a
 * 'stored' outcome and before the commit.
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
import {
  claimAndIndexStatement,
  claimAndIndexValues,
  studyAndSeriesStatement,
  studyAndSeriesValues,
  type ClaimAndIndexRow,
  type StudyAndSeriesRow,
} from './index-instance-statement.ts';
import { normalizeReceivedInstance, type NormalizedInstance, type ReceivedInstance } from './received-instance.ts';
import { linkStudyPatient } from './study-patient.ts';
import type { ValueFinding } from './value-findings.ts';

export type { ReceivedInstance } from './received-instance.ts';

export type IndexOutcome = 'stored' | 'duplicate-identical' | 'duplicate-different';

export interface IndexResult {
  outcome: IndexOutcome;
  /** The indexed instance's id: the new one when stored, the first one for a duplicate. */
  instanceId: string;
  /** Where the kept instance's file is (relative to the DICOM storage folder: resolveStoredInstance). */
  storagePath: string;
  studyInstanceUid: string;
  /** The study's patient in this site, when there is one. */
  patientId: string | null;
  /** Inconsistencies that did not prevent indexing, for the listener's log. */
  warnings: string[];
  /** This instance's values indexed otherwise than it holds them (value-findings.ts): the sender is warned. */
  findings: ValueFinding[];
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

/** A SOP Instance UID claimed by this transaction; `complete` finishes its index. */
export interface InstanceClaim {
  outcome: 'claimed';
  complete(): Promise<IndexResult>;
}

/**
 * Claims the SOP Instance UID for this transaction and writes what the instance changes in its
 * study and series rows (one statement), or answers the duplicate it is. A claim must be
 * completed before the transaction commits: `complete` checks the series' study, links the
 * study's patient, and writes the study and series rows when a concurrent first instance kept
 * the statement from reading them.
 */
export async function claimInstance(tx: Transaction, site: SiteContext, instance: ReceivedInstance): Promise<InstanceClaim | IndexResult> {
  const value = normalizeReceivedInstance(instance);
  const id = randomUUID();
  const { rows } = await tx.query<ClaimAndIndexRow>({
    name: 'imaging-instance-claim-and-index',
    text: claimAndIndexStatement,
    values: claimAndIndexValues(site, id, value),
  });
  const row = rows[0]!;
  if (!row.claimed) return duplicateOf(tx, site, value);
  const read = row.studies === 1 && row.series_study_instance_uid ? (row as StudyAndSeriesRow) : undefined;
  return { outcome: 'claimed', complete: () => completeIndex(tx, site, id, value, read) };
}

/** Both steps at once, for callers with no file to place in between. */
export async function indexInstance(tx: Transaction, site: SiteContext, instance: ReceivedInstance): Promise<IndexResult> {
  const claim = await claimInstance(tx, site, instance);
  return claim.outcome === 'claimed' ? claim.complete() : claim;
}

async function completeIndex(tx: Transaction, site: SiteContext, id: string, value: NormalizedInstance, read: StudyAndSeriesRow | undefined): Promise<IndexResult> {
  // Nothing read: a concurrent first instance's study or series committed after the claim's
  // snapshot. The upsert waits for it and returns the rows.
  const row =
    read ??
    (await tx.query<StudyAndSeriesRow>({ name: 'imaging-study-series-upsert', text: studyAndSeriesStatement, values: studyAndSeriesValues(site, value) })).rows[0];
  if (!row) throw new Error(`study ${value.studyInstanceUid} could not be written`);
  // PS3.3 C.7.3.1: a series belongs to exactly one study. An instance claiming otherwise is
  // inconsistent, and indexing it would put its images under the wrong study; the caller's
  // transaction rolls back what the statement wrote.
  if (row.series_study_instance_uid !== value.studyInstanceUid) {
    const owner = row.series_study_instance_uid;
    throw new DomainError('invalid', `series ${value.seriesInstanceUid} belongs to study ${owner}, not ${value.studyInstanceUid}`, [
      { message: `series ${value.seriesInstanceUid} already belongs to another study`, location: 'seriesInstanceUid' },
    ]);
  }
  const warnings: string[] = [];
  if (value.patientId !== null && row.dicom_patient_id !== null && row.dicom_patient_id !== value.patientId) {
    warnings.push(`study ${value.studyInstanceUid} is indexed under PatientID ${row.dicom_patient_id}; this instance says ${value.patientId}`);
  }
  let patientId = row.patient_id;
  if (patientId === null && row.dicom_patient_id !== null) {
    patientId = await linkStudyPatient(tx, site, value.studyInstanceUid, { ...value, patientId: row.dicom_patient_id });
  }
  return { outcome: 'stored', instanceId: id, storagePath: value.storagePath, studyInstanceUid: value.studyInstanceUid, patientId, warnings, findings: value.findings };
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
    findings: value.findings,
  };
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
