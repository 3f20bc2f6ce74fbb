/**
 * What each ADT event says of the visit of PV1-19 (HL7 v2.5.1 chapter 3). Most events describe
 * the visit and state where it stands; the cancels (A11, A12, A13) undo one earlier event and
 * describe nothing else, so they are planned apart: they need the visit they undo, and never
 * create a patient or a visit.
 */
import type { Patient } from '@medplum/fhirtypes';
import type { VisitCorrection } from '../../domain/patients/visit-corrections.ts';
import type { VisitStatus } from '../../domain/patients/visits.ts';
import type { Hl7Message, Segment } from '../er7/message.ts';
import { mapPid } from '../mapping/patient.ts';
import { mapPv1 } from '../mapping/visit.ts';
import { errorCodes, error, type Problem } from '../problems.ts';

/**
 * The status an event gives its visit. Absent (A02 transfer, A08 update): the event does not say,
 * and the stored status stays (a transfer or an update does not revive a cancelled visit).
 */
export const visitStatusOfEvent: Readonly<Record<string, VisitStatus>> = {
  A01: 'in-progress',
  A04: 'in-progress',
  // A pre-admission: the patient is expected, not admitted.
  A05: 'planned',
  // A06 and A07 change the class of a visit the patient is present for.
  A06: 'in-progress',
  A07: 'in-progress',
  A03: 'finished',
};

export const visitCorrectionEvents: readonly string[] = ['A11', 'A12', 'A13'];

export interface VisitCorrectionPlan {
  kind: 'visit-correction';
  event: string;
  /** The PID's patient, for its business identifier only: a cancel does not change demographics. */
  patient: Patient;
  visitNumber: string;
  correction: VisitCorrection;
  pv1: Segment;
}

/** A11, A12 or A13: the visit it undoes (PV1-19) and what it restores. */
export function planVisitCorrection(message: Hl7Message, event: string, pid: Segment, problems: Problem[], timeZone?: string | null): VisitCorrectionPlan | undefined {
  const mapped = mapPid(pid, timeZone);
  // Only PID-3 is read: the demographics of a cancel are not stored, so their warnings would mislead.
  problems.push(...mapped.problems.filter((p) => p.location?.field === 3));
  const pv1 = message.segments.find((s) => s.name === 'PV1');
  if (!pv1) {
    problems.push(error(errorCodes.segmentSequenceError, `ADT^${event} has no PV1 segment: the visit to correct is named by PV1-19`, { segment: 'PV1' }));
    return undefined;
  }
  const at = (field: number) => ({ segment: 'PV1', sequence: pv1.sequence, field });
  // PV1's own warnings (class, times) are about fields a cancel does not store.
  const visit = mapPv1(pv1, timeZone).visit;
  if (!visit.visitNumber) problems.push(error(errorCodes.requiredFieldMissing, `PV1-19 (visit number) is empty: ADT^${event} undoes an event of one visit, which must be named`, at(19)));
  let correction: VisitCorrection | undefined;
  if (event === 'A11') correction = { kind: 'cancel-visit' };
  else if (event === 'A13') correction = { kind: 'cancel-discharge', ...(visit.location ? { location: visit.location } : {}) };
  // A12's PV1-3 is where the patient returns to (section 3.3.12; PV1-6 is the location being cancelled).
  else if (visit.location) correction = { kind: 'cancel-transfer', location: visit.location };
  else problems.push(error(errorCodes.requiredFieldMissing, 'PV1-3 (assigned patient location) is empty: ADT^A12 names in it the location the patient returns to', at(3)));
  if (!visit.visitNumber || !correction || !mapped.patient.identifier?.[0]?.value) return undefined;
  return { kind: 'visit-correction', event, patient: mapped.patient, visitNumber: visit.visitNumber, correction, pv1 };
}
