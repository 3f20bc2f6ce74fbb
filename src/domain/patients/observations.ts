/**
 * Results for a patient (HL7 v2 ORU^R01 OBX): stored as Observations keyed by a stable
 * identifier, so a re-sent or corrected result updates the Observation it first created.
 */
import type { Observation } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import { resourceStore } from '../records/resource-store.ts';
import type { SiteContext } from '../site-context.ts';
import { sameContent } from './same-content.ts';

export async function recordPatientObservation(
  tx: Transaction,
  site: SiteContext,
  patientId: string,
  observation: Observation,
): Promise<{ observation: Observation; created: boolean }> {
  const identifier = observation.identifier?.[0];
  if (!identifier?.value) throw new DomainError('invalid', 'a result needs an identifier to be stored idempotently');
  const store = resourceStore(tx, site);
  const withSubject: Observation = { ...observation, subject: { reference: `Patient/${patientId}` } };
  const lookup = { value: identifier.value, ...(identifier.system ? { system: identifier.system } : {}) };
  const outcome = await store.createIfNoneExist(`identifier=${identifier.system ?? ''}|${identifier.value}`, (s) => s.findByIdentifier('Observation', lookup), withSubject);
  if (outcome.outcome === 'created') return { observation: outcome.resource, created: true };
  if (outcome.outcome === 'ambiguous') {
    throw new DomainError('conflict', `${outcome.count} observations already carry identifier ${identifier.value}`);
  }
  const existing = outcome.resource as Observation;
  if (sameContent(existing, withSubject)) return { observation: existing, created: false };
  return { observation: await store.update<Observation>({ ...withSubject, id: existing.id! }), created: false };
}
