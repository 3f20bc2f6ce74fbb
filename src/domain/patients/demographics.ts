/**
 * Patient resolution inside a site by business identifier (identifier[0].value, DESIGN.md
 * "Patient write mapping"), for HL7 v2/v3 ADT and DICOM intake.
 */
import type { Identifier, Patient } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import { resourceStore } from '../records/resource-store.ts';
import type { SiteContext } from '../site-context.ts';
import { sameContent } from './same-content.ts';

function businessIdentifier(patient: Patient): string {
  const value = patient.identifier?.[0]?.value?.trim();
  if (!value) {
    throw new DomainError('invalid', 'the patient has no business identifier (identifier[0].value)', [
      { message: 'a patient identifier is required', location: 'Patient.identifier[0].value' },
    ]);
  }
  return value;
}

/**
 * ADT: find the site's active patient with this business identifier and update its demographics
 * from `patient`, or create it. Elements absent from `patient` are left as they are (an HL7 v2
 * field that is empty means "no change"), elements listed in `clear` are deleted; identifiers the stored patient has and the message
 * lacks (for instance a merged patient's old identifiers) are kept.
 */
export async function upsertPatientDemographics(
  tx: Transaction,
  site: SiteContext,
  patient: Patient,
  options: { clear?: readonly ClearableElement[] } = {},
): Promise<{ patient: Patient; created: boolean }> {
  const value = businessIdentifier(patient);
  const store = resourceStore(tx, site);
  const { patient: found, created } = await store.findOrCreatePatient(value, () => ({ ...patient, id: undefined, resourceType: 'Patient' }) as Patient);
  if (created) return { patient: found, created };
  const updated = mergeDemographics(found, patient, options.clear ?? []);
  if (sameContent(found, updated)) return { patient: found, created: false };
  return { patient: await store.update(updated), created: false };
}

/**
 * DICOM and lab results: the patient with the candidate's business identifier, created from it
 * only if none; never updates. An identifier merged away by A40 resolves to the survivor.
 */
export async function ensurePatient(tx: Transaction, site: SiteContext, candidate: Patient): Promise<{ patientId: string; created: boolean }> {
  const value = businessIdentifier(candidate);
  const found = await findPatientId(tx, site, candidate);
  if (found) return { patientId: found, created: false };
  const { patient, created } = await resourceStore(tx, site).findOrCreatePatient(value, () => ({ ...candidate, id: undefined, resourceType: 'Patient' }) as Patient);
  return { patientId: patient.id!, created };
}

/**
 * The id of the site's patient with the candidate's business identifier (an identifier merged
 * away by A40 resolving to the survivor), or undefined; never creates one (ADT cancels: there is
 * nothing to undo for a patient the site does not know).
 */
export async function findPatientId(tx: Transaction, site: SiteContext, candidate: Patient): Promise<string | undefined> {
  const value = businessIdentifier(candidate);
  const store = resourceStore(tx, site);
  // The common case, a known patient, costs one look-up; the merge check only runs for unknown ones.
  const known = await store.findPatientByBusinessIdentifier(value);
  return known ? known.id! : survivorOfMerge(store, value);
}

/**
 * After a merge the merged-away patient is inactive and the survivor carries its identifier
 * (use "old"). Modalities and laboratories keep sending the old identifier for a while (their
 * orders were placed before the merge): what they send belongs to the survivor, not to a new
 * patient created under the old identifier.
 */
async function survivorOfMerge(store: ReturnType<typeof resourceStore>, identifier: string): Promise<string | undefined> {
  const carriers = (await store.findByIdentifier<Patient>('Patient', { value: identifier })).filter((patient) => patient.active !== false);
  // Exactly one active patient carries it; with none or several, the ordinary rule decides.
  return carriers.length === 1 ? carriers[0]!.id : undefined;
}

/** Elements an update may delete (HL7 v2 "" null); 'deceased' is deceasedBoolean and deceasedDateTime. */
export type ClearableElement = 'name' | 'birthDate' | 'gender' | 'address' | 'telecom' | 'deceased';

export function mergeDemographics(current: Patient, incoming: Patient, clear: readonly ClearableElement[] = []): Patient {
  const result: Patient = { ...current };
  // deceased[x] is one choice element: either form replaces (or clears) the other.
  const deceasedChanges = clear.includes('deceased') || incoming.deceasedBoolean !== undefined || incoming.deceasedDateTime !== undefined;
  if (deceasedChanges) {
    delete result.deceasedBoolean;
    delete result.deceasedDateTime;
  }
  for (const key of clear) if (key !== 'deceased') delete result[key];
  for (const key of ['name', 'telecom', 'gender', 'birthDate', 'address', 'maritalStatus', 'communication', 'deceasedBoolean', 'deceasedDateTime'] as const) {
    if (incoming[key] !== undefined) (result as unknown as Record<string, unknown>)[key] = incoming[key];
  }
  result.identifier = mergeIdentifiers(current.identifier ?? [], incoming.identifier ?? []);
  return result;
}

/** Incoming identifiers first (identifier[0] is the business identifier), then any others kept. */
function mergeIdentifiers(current: Identifier[], incoming: Identifier[]): Identifier[] {
  const key = (id: Identifier) => `${id.system ?? ''}|${id.value ?? ''}`;
  const seen = new Set(incoming.map(key));
  return [...incoming, ...current.filter((id) => !seen.has(key(id)))];
}
