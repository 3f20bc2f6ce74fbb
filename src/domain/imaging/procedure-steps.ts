/**
 * Modality Performed Procedure Step state machine (PS3.4 F.7.2; issue 5 point 5), shared by the
 * HTTP intake and the DIMSE N-CREATE / N-SET handlers.
 *
 *   (none) --record--> IN PROGRESS | COMPLETED | DISCONTINUED
 *   IN PROGRESS --> IN PROGRESS (attributes updated) | COMPLETED | DISCONTINUED
 *   COMPLETED, DISCONTINUED: final (PS3.4 F.7.2.2.2: no further N-SET). Re-sending the same final
 *   state with nothing new is an idempotent no-op; anything else is a 'conflict'.
 *
 * A step names its study by UID only, so it is recorded whether the study's images have arrived
 * or not, and the worklist joins the two whichever came first.
 */
import type { Queryable, Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import { cleanText } from './dicom-values.ts';
import { normalizeStepInput, type NormalizedStepInput, type ProcedureCode, type ProcedureStepInput, type ProcedureStepStatus } from './procedure-step-input.ts';

export { isProcedureStepStatus, procedureStepStatuses } from './procedure-step-input.ts';
export type { ProcedureCode, ProcedureStepInput, ProcedureStepStatus } from './procedure-step-input.ts';

export interface ProcedureStep {
  sopInstanceUid: string;
  studyInstanceUid: string;
  status: ProcedureStepStatus;
  modality: string | null;
  stationAeTitle: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  procedureCode: ProcedureCode | null;
  /** Which intake last wrote it. */
  source: 'http' | 'dimse' | 'operator';
  createdAt: Date;
  updatedAt: Date;
  version: number;
  /** Whether images of its study have been indexed in this site yet. */
  studyIndexed: boolean;
}

export interface RecordOptions {
  /**
   * 'upsert' (default, the HTTP intake): create or move the step. 'create' (DIMSE N-CREATE):
   * a known SOP Instance UID is a 'conflict'. 'update' (DIMSE N-SET): an unknown one is 'not-found'.
   */
  mode?: 'upsert' | 'create' | 'update';
}

export interface RecordResult {
  step: ProcedureStep;
  created: boolean;
  /** False when the call changed nothing (a re-sent update). */
  changed: boolean;
}

const finalStatuses: readonly ProcedureStepStatus[] = ['COMPLETED', 'DISCONTINUED'];

const stepColumns = `p.sop_instance_uid, p.study_instance_uid, p.status, p.modality, p.station_ae_title, p.started_at,
  p.ended_at, p.procedure_code_value, p.procedure_coding_scheme, p.procedure_code_meaning, p.source, p.created_at,
  p.updated_at, p.version,
  EXISTS (SELECT 1 FROM imaging_study s WHERE s.site_id = p.site_id AND s.study_instance_uid = p.study_instance_uid) AS study_indexed`;

export async function recordProcedureStep(
  tx: Transaction,
  site: SiteContext,
  input: ProcedureStepInput,
  options: RecordOptions = {},
): Promise<RecordResult> {
  const value = normalizeStepInput(input);
  const mode = options.mode ?? 'upsert';
  const source = sourceOf(site);
  // Lock the row (or, for a new UID, its key) so concurrent updates of one step serialise.
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 5))', [`${site.siteId}/${value.sopInstanceUid}`]);
  const existing = await readStep(tx, site, value.sopInstanceUid);

  if (!existing) {
    if (mode === 'update') throw new DomainError('not-found', `no procedure step ${value.sopInstanceUid}`, [{ message: 'no such procedure step', location: 'sopInstanceUid' }]);
    await tx.query(
      `INSERT INTO imaging_procedure_step (site_id, sop_instance_uid, study_instance_uid, status, modality, station_ae_title,
         started_at, ended_at, procedure_code_value, procedure_coding_scheme, procedure_code_meaning, source)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        site.siteId, value.sopInstanceUid, value.studyInstanceUid, value.status, value.modality ?? null, value.stationAeTitle ?? null,
        value.startedAt ?? null, value.endedAt ?? null, value.procedureCode?.codeValue ?? null,
        value.procedureCode?.codingSchemeDesignator ?? null, value.procedureCode?.codeMeaning ?? null, source,
      ],
    );
    return { step: (await readStep(tx, site, value.sopInstanceUid))!, created: true, changed: true };
  }

  if (mode === 'create') {
    throw new DomainError('conflict', `procedure step ${value.sopInstanceUid} already exists`, [{ message: 'procedure step already exists', location: 'sopInstanceUid' }]);
  }
  if (existing.studyInstanceUid !== value.studyInstanceUid) {
    throw new DomainError('conflict', `procedure step ${value.sopInstanceUid} belongs to study ${existing.studyInstanceUid}`, [
      { message: 'a procedure step cannot move to another study', location: 'studyInstanceUid' },
    ]);
  }
  const merged = merge(existing, value);
  const changed = differs(existing, merged);
  if (finalStatuses.includes(existing.status)) {
    if (!changed) return { step: existing, created: false, changed: false };
    const message = value.status === existing.status
      ? `procedure step ${value.sopInstanceUid} is ${existing.status} and can no longer change`
      : `procedure step ${value.sopInstanceUid} is ${existing.status}; it cannot become ${value.status}`;
    throw new DomainError('conflict', message, [{ message, location: value.status === existing.status ? undefined : 'status' }]);
  }
  if (!changed) return { step: existing, created: false, changed: false };
  if (merged.startedAt && merged.endedAt && merged.endedAt < merged.startedAt) {
    throw new DomainError('invalid', 'endedAt is before startedAt', [{ message: 'endedAt is before startedAt', location: 'endedAt' }]);
  }
  await tx.query(
    `UPDATE imaging_procedure_step SET status = $3, modality = $4, station_ae_title = $5, started_at = $6, ended_at = $7,
       procedure_code_value = $8, procedure_coding_scheme = $9, procedure_code_meaning = $10, source = $11,
       updated_at = now(), version = version + 1
     WHERE site_id = $1 AND sop_instance_uid = $2`,
    [
      site.siteId, value.sopInstanceUid, merged.status, merged.modality, merged.stationAeTitle, merged.startedAt, merged.endedAt,
      merged.procedureCode?.codeValue ?? null, merged.procedureCode?.codingSchemeDesignator ?? null,
      merged.procedureCode?.codeMeaning ?? null, source,
    ],
  );
  return { step: (await readStep(tx, site, value.sopInstanceUid))!, created: false, changed: true };
}

/** The step with that SOP Instance UID in this site, if any. */
export async function readProcedureStep(db: Queryable, site: SiteContext, sopInstanceUid: string): Promise<ProcedureStep | undefined> {
  const uid = cleanText(sopInstanceUid, 128);
  return uid ? readStep(db, site, uid) : undefined;
}

/** The steps recorded against a study of this site, oldest first. */
export async function listProcedureSteps(db: Queryable, site: SiteContext, studyInstanceUid: string): Promise<ProcedureStep[]> {
  const { rows } = await db.query(
    `SELECT ${stepColumns} FROM imaging_procedure_step p
     WHERE p.site_id = $1 AND p.study_instance_uid = $2 ORDER BY p.created_at, p.sop_instance_uid`,
    [site.siteId, studyInstanceUid],
  );
  return rows.map(toStep);
}

async function readStep(db: Queryable, site: SiteContext, sopInstanceUid: string): Promise<ProcedureStep | undefined> {
  const { rows } = await db.query(`SELECT ${stepColumns} FROM imaging_procedure_step p WHERE p.site_id = $1 AND p.sop_instance_uid = $2`, [
    site.siteId,
    sopInstanceUid,
  ]);
  return rows[0] ? toStep(rows[0]) : undefined;
}

type StepState = Pick<ProcedureStep, 'status' | 'modality' | 'stationAeTitle' | 'startedAt' | 'endedAt' | 'procedureCode'>;

/** Attributes sent replace stored ones; attributes left out keep their stored value (N-SET semantics). */
function merge(existing: ProcedureStep, value: NormalizedStepInput): StepState {
  return {
    status: value.status,
    modality: value.modality ?? existing.modality,
    stationAeTitle: value.stationAeTitle ?? existing.stationAeTitle,
    startedAt: value.startedAt ?? existing.startedAt,
    endedAt: value.endedAt ?? existing.endedAt,
    procedureCode: value.procedureCode
      ? {
          codeValue: value.procedureCode.codeValue,
          ...(value.procedureCode.codingSchemeDesignator !== null ? { codingSchemeDesignator: value.procedureCode.codingSchemeDesignator } : {}),
          ...(value.procedureCode.codeMeaning !== null ? { codeMeaning: value.procedureCode.codeMeaning } : {}),
        }
      : existing.procedureCode,
  };
}

function differs(a: StepState, b: StepState): boolean {
  const time = (date: Date | null) => date?.getTime() ?? null;
  const code = (c: ProcedureCode | null) => (c ? [c.codeValue, c.codingSchemeDesignator ?? null, c.codeMeaning ?? null].join('\u0000') : null);
  return (
    a.status !== b.status ||
    a.modality !== b.modality ||
    a.stationAeTitle !== b.stationAeTitle ||
    time(a.startedAt) !== time(b.startedAt) ||
    time(a.endedAt) !== time(b.endedAt) ||
    code(a.procedureCode) !== code(b.procedureCode)
  );
}

function sourceOf(site: SiteContext): ProcedureStep['source'] {
  if (site.actor.kind === 'dicom') return 'dimse';
  if (site.actor.kind === 'api-key') return 'http';
  return 'operator';
}

export function toStep(row: Record<string, any>): ProcedureStep {
  const procedureCode: ProcedureCode | null = row.procedure_code_value
    ? {
        codeValue: row.procedure_code_value,
        ...(row.procedure_coding_scheme ? { codingSchemeDesignator: row.procedure_coding_scheme } : {}),
        ...(row.procedure_code_meaning ? { codeMeaning: row.procedure_code_meaning } : {}),
      }
    : null;
  return {
    sopInstanceUid: row.sop_instance_uid,
    studyInstanceUid: row.study_instance_uid,
    status: row.status,
    modality: row.modality,
    stationAeTitle: row.station_ae_title,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    procedureCode,
    source: row.source,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
    studyIndexed: row.study_indexed,
  };
}
