/**
 * Results for a patient (HL7 v2 ORU^R01 OBX): stored as Observations (or DocumentReferences for
 * encapsulated data) keyed by a stable identifier, so a re-sent or corrected result updates the
 * resource it first created.
 */
import type { DocumentReference, Observation } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import { resourceStore } from '../records/resource-store.ts';
import type { SiteContext } from '../site-context.ts';
import { sameContent } from './same-content.ts';

export type PatientResult = Observation | DocumentReference;

/**
 * The results of one message, stored together: new ones in one statement, after one look-up of
 * all their identifiers (an ORU^R01 of a panel took three statements per result). Each is
 * stored, left alone (same content) or updated as it would be on its own, and any problem fails
 * the call, and with it the caller's transaction, as one result's problem always did.
 */
export async function recordPatientResults(
  tx: Transaction,
  site: SiteContext,
  patientId: string,
  results: readonly PatientResult[],
): Promise<{ resource: PatientResult; created: boolean }[]> {
  const items = results.map((result) => {
    const identifier = result.identifier?.[0];
    if (!identifier?.value) throw new DomainError('invalid', 'a result needs an identifier to be stored idempotently');
    return {
      identifier: { value: identifier.value, ...(identifier.system ? { system: identifier.system } : {}) },
      resource: { ...result, subject: { reference: `Patient/${patientId}` } } as PatientResult,
    };
  });
  const store = resourceStore(tx, site);
  const outcomes = await store.createEachIfNoneExist(items);
  const stored: { resource: PatientResult; created: boolean }[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    const { identifier, resource } = items[index]!;
    if (outcome.outcome === 'created') {
      stored.push({ resource: outcome.resource, created: true });
      continue;
    }
    if (outcome.outcome === 'ambiguous') {
      throw new DomainError('conflict', `${outcome.count} ${resource.resourceType} resources already carry identifier ${identifier.value}`);
    }
    // Looked up within the result's own type, so what exists is of that type.
    const existing = outcome.resource as PatientResult;
    if (sameContent(existing, resource)) stored.push({ resource: existing, created: false });
    else stored.push({ resource: await store.update<PatientResult>({ ...resource, id: existing.id! }), created: false });
  }
  return stored;
}
