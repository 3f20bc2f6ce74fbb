/**
 * Cancellations of ADT events (HL7 v2.5.1 sections 3.3.11 to 3.3.13) applied to a stored visit.
 * Each changes only what the cancelled event changed: the rest of the visit (class, doctor, admit
 * time) is as the sender last described it, and a cancel carries no new description of it.
 */
import type { Transaction } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import type { VisitContext } from './visits.ts';

export type VisitCorrection =
  /** A11: the admission or registration did not happen; the visit is kept, marked cancelled. */
  | { kind: 'cancel-visit' }
  /** A12: the transfer is undone; the patient is back at `location`. */
  | { kind: 'cancel-transfer'; location: NonNullable<VisitContext['location']> }
  /** A13: the discharge is undone; the visit is current again, at `location` when sent. */
  | { kind: 'cancel-discharge'; location?: VisitContext['location'] };

/** What each correction writes over the stored context; `dischargeTime` is removed by A13. */
function changes(correction: VisitCorrection): { set: Partial<VisitContext>; remove: string[] } {
  switch (correction.kind) {
    case 'cancel-visit':
      return { set: { status: 'cancelled' }, remove: [] };
    case 'cancel-transfer':
      return { set: { location: correction.location }, remove: [] };
    case 'cancel-discharge':
      return { set: { status: 'in-progress', ...(correction.location ? { location: correction.location } : {}) }, remove: ['dischargeTime'] };
  }
}

/**
 * Applies the correction to the patient's visit of that number. False when the site has no such
 * visit: there is nothing to undo, and a cancel never creates one.
 */
export async function correctVisit(tx: Transaction, site: SiteContext, patientId: string, visitNumber: string, correction: VisitCorrection): Promise<boolean> {
  const { set, remove } = changes(correction);
  const { rowCount } = await tx.query(
    `UPDATE patient_visit SET context = (context - $4::text[]) || $5::jsonb, updated_at = now()
      WHERE site_id = $1 AND patient_id = $2 AND visit_number = $3`,
    [site.siteId, patientId, visitNumber, remove, JSON.stringify(set)],
  );
  return (rowCount ?? 0) > 0;
}
