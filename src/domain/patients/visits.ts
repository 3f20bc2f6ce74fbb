/**
 * Visit context (HL7 v2 PV1) kept against a patient, site-scoped. A visit is keyed by its visit
 * number; messages without one update the patient's single unnumbered visit.
 */
import type { NamedStatement, Transaction, Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';

export interface VisitContext {
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
  patientId: string;
  updatedAt: string;
}

export async function recordVisit(tx: Transaction, site: SiteContext, patientId: string, visit: VisitContext): Promise<void> {
  await tx.query(visitUpsert(site, patientId, visit));
}

/** The upsert recordVisit runs, as a statement a caller may send together with its own (recordMessage). */
export function visitUpsert(site: SiteContext, patientId: string, visit: VisitContext): NamedStatement {
  const values = [site.siteId, patientId, visit.visitNumber ?? null, JSON.stringify(visit), visit.admitTime ?? null];
  // Two partial unique indexes (numbered, unnumbered) give each upsert its conflict target.
  return visit.visitNumber
    ? {
        name: 'visit-upsert-numbered',
        text: `INSERT INTO patient_visit (site_id, id, patient_id, visit_number, context, admit_time)
               VALUES ($1, gen_random_uuid(), $2, $3, $4, $5)
               ON CONFLICT (site_id, patient_id, visit_number) WHERE visit_number IS NOT NULL
               DO UPDATE SET context = EXCLUDED.context, admit_time = EXCLUDED.admit_time, updated_at = now()`,
        values,
      }
    : {
        name: 'visit-upsert-unnumbered',
        text: `INSERT INTO patient_visit (site_id, id, patient_id, visit_number, context, admit_time)
               VALUES ($1, gen_random_uuid(), $2, $3, $4, $5)
               ON CONFLICT (site_id, patient_id) WHERE visit_number IS NULL
               DO UPDATE SET context = EXCLUDED.context, admit_time = EXCLUDED.admit_time, updated_at = now()`,
        values,
      };
}

export async function listVisits(db: Queryable, site: SiteContext, patientId: string): Promise<StoredVisit[]> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(patientId)) return [];
  const { rows } = await db.query<{ patient_id: string; context: VisitContext; updated_at: Date }>(
    'SELECT patient_id, context, updated_at FROM patient_visit WHERE site_id = $1 AND patient_id = $2 ORDER BY updated_at DESC',
    [site.siteId, patientId],
  );
  return rows.map((row) => ({ ...row.context, patientId: row.patient_id, updatedAt: row.updated_at.toISOString() }));
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
