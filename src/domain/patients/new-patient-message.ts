/**
 * An ADT message about a patient the site may not know yet, stored in one round trip: the
 * patient, its visit and the message log entry by one call of the database function
 * record_new_patient_message (migration 0850), which is its own transaction (shared with the
 * messages of other connections that arrive at once: new-patient-calls.ts). It takes the
 * business identifier's lock that findOrCreatePatient takes and looks the patient up after it,
 * so concurrent messages for one new patient still create one; it writes nothing when the
 * patient exists or the control id was logged before, and the caller then runs its ordinary
 * transaction, which answers those cases as it always has.
 */
import { randomUUID } from 'node:crypto';
import type { Patient } from '@medplum/fhirtypes';
import type { Database } from '../../storage/database.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';
import { entryValues, type NewMessage } from '../messages/message-log.ts';
import type { SiteContext } from '../site-context.ts';
import { patientIdentifierLockKey, prepareCreate, rowValues } from '../records/write.ts';
import { callRecordNewPatientMessage, type NewPatientCallOutcome } from './new-patient-calls.ts';
import { storedVisitContext, type VisitContext } from './visits.ts';

export type NewPatientMessageOutcome =
  | { outcome: 'created'; patientId: string }
  /** Nothing written: an active patient has the identifier, or the patient cannot be created as it is. */
  | { outcome: 'not-new' }
  /** Nothing written: this sender's control id is in the log already. */
  | { outcome: 'duplicate' };

/**
 * Must be given the Database, not a transaction: the call commits on its own, and the message
 * may be acknowledged as soon as it answers 'created'. A patient that fails validation, or whose
 * business identifier is missing or padded, is 'not-new' without a round trip: the ordinary path
 * gives such a message its error.
 */
export async function recordNewPatientMessage(
  db: Database,
  site: SiteContext,
  input: { patient: Patient; visit?: VisitContext; message: NewMessage },
): Promise<NewPatientMessageOutcome> {
  const identifier = input.patient.identifier?.[0]?.value;
  if (!identifier || identifier.trim() !== identifier || input.message.reprocessOf !== undefined) return { outcome: 'not-new' };
  let pending;
  try {
    pending = await prepareCreate(db, site, { ...input.patient, id: undefined, resourceType: 'Patient' } as Patient, randomUUID());
  } catch {
    return { outcome: 'not-new' };
  }
  const visit = input.visit;
  const values = [
    ...rowValues(site, pending.type, pending.resource, pending.values),
    patientIdentifierLockKey(site, identifier),
    visit?.visitNumber ?? null,
    visit ? JSON.stringify(storedVisitContext(visit)) : null,
    visit?.admitTime ?? null,
    ...entryValues(site, randomUUID(), input.message).slice(1),
  ];
  let outcome: NewPatientCallOutcome;
  try {
    // With the calls of other connections' messages when they come together (new-patient-calls.ts).
    outcome = await callRecordNewPatientMessage(db, values);
  } catch (error) {
    // Nothing was written (one statement); the ordinary path meets the same cause and answers it
    // as it always has (a FHIR create of the identifier racing past the lock, for instance).
    if (isTransientDatabaseError(error)) throw error;
    return { outcome: 'not-new' };
  }
  if (outcome === 'created') return { outcome, patientId: pending.resource.id! };
  return outcome === 'duplicate' ? { outcome } : { outcome: 'not-new' };
}
