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

export async function recordPatientObservation(
  tx: Transaction,
  site: SiteContext,
  patientId: string,
  observation: Observation,
): Promise<{ observation: Observation; created: boolean }> {
  const { resource, created } = await recordPatientResult(tx, site, patientId, observation);
  return { observation: resource, created };
}

/** A document result (HL7 v2 OBX of type ED or RP), keyed like an Observation. */
export async function recordPatientDocument(
  tx: Transaction,
  site: SiteContext,
  patientId: string,
  document: DocumentReference,
): Promise<{ document: DocumentReference; created: boolean }> {
  const { resource, created } = await recordPatientResult(tx, site, patientId, document);
  return { document: resource, created };
}

async function recordPatientResult<T extends Observation | DocumentReference>(
  tx: Transaction,
  site: SiteContext,
  patientId: string,
  observation: T,
): Promise<{ resource: T; created: boolean }> {
  const identifier = observation.identifier?.[0];
  if (!identifier?.value) throw new DomainError('invalid', 'a result needs an identifier to be stored idempotently');
  const store = resourceStore(tx, site);
  const withSubject = { ...observation, subject: { reference: `Patient/${patientId}` } } as T;
  const lookup = { value: identifier.value, ...(identifier.system ? { system: identifier.system } : {}) };
  const outcome = await store.createIfNoneExist(`identifier=${identifier.system ?? ''}|${identifier.value}`, (s) => s.findByIdentifier(observation.resourceType, lookup), withSubject);
  if (outcome.outcome === 'created') return { resource: outcome.resource, created: true };
  if (outcome.outcome === 'ambiguous') {
    throw new DomainError('conflict', `${outcome.count} ${observation.resourceType} resources already carry identifier ${identifier.value}`);
  }
  const existing = outcome.resource as T;
  if (existing.resourceType !== observation.resourceType) throw new DomainError('conflict', `identifier ${identifier.value} belongs to a ${existing.resourceType}`);
  if (sameContent(existing, withSubject)) return { resource: existing, created: false };
  return { resource: await store.update<T>({ ...withSubject, id: existing.id! }), created: false };
}
