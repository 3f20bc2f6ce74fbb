/**
 * Visit context (HL7 v2 PV1) kept against a patient, site-scoped. A visit is keyed by its visit
 * number; messages without one update the patient's single unnumbered visit. Its status lives in
 * the context (jsonb) rather than a column: the one-statement write of a new patient
 * (record_new_patient_message, migration 0850) stores the context as given, so it needs no new
 * function for it, and visits written before statuses existed read as their context implies.
 */
import type { NamedStatement, Transaction, Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';

/**
 * Where the visit stands, as FHIR Encounter.status codes: `planned` a pre-admission (A05),
 * `in-progress` a current visit, `finished` ended (A03), `cancelled` it did not happen (A11).
 */
export type VisitStatus = 'planned' | 'in-progress' | 'finished' | 'cancelled';

export interface VisitContext {
  /**
   * Set by an event that says where the visit stands (admit, discharge, cancel...). Absent, the
   * stored status is kept, and a new visit takes the one its fields imply (visitStatusImplied).
   */
  status?: VisitStatus;
  /** Table 0004 code (I, O, E, ...) and its meaning. */
  patientClass?: string;
  patientClassDisplay?: string;
  location?: { pointOfCare: string; room: string; bed: string; facility: string; text: string };
  attendingDoctor?: { id?: string; display?: string };
  visitNumber?: string;
  /** FHIR dateTime */
  admitTime?: string;
  /** FHIR dateTime: the visit ended (a discharge, ADT^A03) */
  dischargeTime?: string;
}

export interface StoredVisit extends VisitContext {
  status: VisitStatus;
  patientId: string;
  updatedAt: string;
}

export async function recordVisit(tx: Transaction, site: SiteContext, patientId: string, visit: VisitContext): Promise<void> {
  await tx.query(visitUpsert(site, patientId, visit));
}

/**
 * The status of a visit no event has stated one for (an A08 or a result about a visit the
 * service has not seen, or a visit stored before statuses existed): ended when it has a
 * discharge time, a pre-admission when its class says so (table 0004 `P`), else current.
 */
export function visitStatusImplied(visit: VisitContext): VisitStatus {
  if (visit.dischargeTime) return 'finished';
  return visit.patientClass === 'P' ? 'planned' : 'in-progress';
}

/** The context as stored: always with a status. */
export function storedVisitContext(visit: VisitContext): VisitContext {
  return { ...visit, status: visit.status ?? visitStatusImplied(visit) };
}

/**
 * The upsert recordVisit runs, as a statement a caller may send together with its own
 * (recordMessage). A visit without a status keeps the one stored, so that an update (A08) or a
 * result does not make a cancelled or pre-admitted visit look current.
 */
export function visitUpsert(site: SiteContext, patientId: string, visit: VisitContext): NamedStatement {
  const values = [site.siteId, patientId, visit.visitNumber ?? null, JSON.stringify(storedVisitContext(visit)), visit.admitTime ?? null];
  // Two partial unique indexes (numbered, unnumbered) give each upsert its conflict target.
  const [key, target] = visit.visitNumber ? ['numbered', '(site_id, patient_id, visit_number) WHERE visit_number IS NOT NULL'] : ['unnumbered', '(site_id, patient_id) WHERE visit_number IS NULL'];
  const [rule, context] = visit.status ? ['', 'EXCLUDED.context'] : ['-keep-status', "EXCLUDED.context || jsonb_strip_nulls(jsonb_build_object('status', patient_visit.context->'status'))"];
  return {
    name: `visit-upsert-${key}${rule}`,
    text: `INSERT INTO patient_visit (site_id, id, patient_id, visit_number, context, admit_time)
           VALUES ($1, gen_random_uuid(), $2, $3, $4, $5)
           ON CONFLICT ${target}
           DO UPDATE SET context = ${context}, admit_time = EXCLUDED.admit_time, updated_at = now()`,
    values,
  };
}

export async function listVisits(db: Queryable, site: SiteContext, patientId: string): Promise<StoredVisit[]> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(patientId)) return [];
  const { rows } = await db.query<{ patient_id: string; context: VisitContext; updated_at: Date }>(
    'SELECT patient_id, context, updated_at FROM patient_visit WHERE site_id = $1 AND patient_id = $2 ORDER BY updated_at DESC',
    [site.siteId, patientId],
  );
  return rows.map((row) => ({ ...row.context, status: row.context.status ?? visitStatusImplied(row.context), patientId: row.patient_id, updatedAt: row.updated_at.toISOString() }));
}

/** Merge: the source patient's visits follow it to the target (numbered visits the target already has stay the target's). */
export async function moveVisits(tx: Transaction, site: SiteContext, fromPatientId: string, toPatientId: string): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE patient_visit v SET patient_id = $3, updated_at = now()
      WHERE v.site_id = $1 AND v.patient_id = $2
        AND NOT EXISTS (SELECT 1 FROM patient_visit t WHERE t.site_id = $1 AND t.patient_id = $3
                        AND t.visit_number IS NOT DISTINCT FROM v.visit_number)`,
    [site.siteId, fromPatientId, toPatientId],
  );
  return rowCount ?? 0;
}
