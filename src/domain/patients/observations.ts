/**
 * Results for a patient (HL7 v2 ORU^R01 OBX): stored as Observations (or DocumentReferences for
 * encapsulated data) found again by their identity, identifier[0], so that a re-sent or
 * corrected result updates the resource it first created (result-matching.ts says which).
 */
import type { Identifier, Resource } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import { resourceStore } from '../records/resource-store.ts';
import type { SiteContext } from '../site-context.ts';
import { matchStoredResults, type PatientResult } from './result-matching.ts';
import { sameContent } from './same-content.ts';

export type { PatientResult } from './result-matching.ts';

export interface IncomingResult {
  /** identifier[0] is the result's identity. */
  resource: PatientResult;
  /**
   * Identities an earlier version of the service gave the same result. A result stored under one
   * of them is found as if it carried the identity, and takes the identity when next written.
   */
  formerIdentifiers?: readonly Identifier[];
}

type IdentifierKey = { system?: string; value: string };

/**
 * The results of one message, stored together: one statement locks every identity looked up (in
 * sorted order, so that messages sharing results wait for each other instead of deadlocking), one
 * looks them all up, and one creates every new result; a changed stored result is updated, an
 * unchanged one left alone. Outcomes are in the order of the results.
 */
export async function recordPatientResults(
  tx: Transaction,
  site: SiteContext,
  patientId: string,
  results: readonly IncomingResult[],
): Promise<{ resource: PatientResult; created: boolean }[]> {
  if (results.length === 0) return [];
  const lookups: { type: PatientResult['resourceType']; identifier: IdentifierKey }[] = [];
  const lookupIndex = new Map<string, number>();
  const lookupOf = (type: PatientResult['resourceType'], identifier: IdentifierKey): number => {
    const key = JSON.stringify([type, identifier.system ?? '', identifier.value]);
    let index = lookupIndex.get(key);
    if (index === undefined) {
      index = lookups.push({ type, identifier }) - 1;
      lookupIndex.set(key, index);
    }
    return index;
  };
  const items = results.map(({ resource, formerIdentifiers = [] }) => {
    const identity = resource.identifier?.[0];
    if (!identity?.value) throw new DomainError('invalid', 'a result needs an identifier to be stored idempotently');
    const identifiers = [identity, ...formerIdentifiers].filter((identifier): identifier is IdentifierKey => Boolean(identifier.value));
    return {
      resource: { ...resource, subject: { reference: `Patient/${patientId}` } } as PatientResult,
      identity: lookupOf(resource.resourceType, identity as IdentifierKey),
      lookups: identifiers.map((identifier) => lookupOf(resource.resourceType, identifier)),
    };
  });
  const store = resourceStore(tx, site);
  const found = await store.findEachByIdentifierLocked(lookups);

  const existing: (PatientResult | undefined)[] = new Array(items.length);
  const byIdentity = new Map<number, number[]>();
  for (const [index, item] of items.entries()) byIdentity.set(item.identity, [...(byIdentity.get(item.identity) ?? []), index]);
  for (const members of byIdentity.values()) {
    const stored = new Map<string, Resource>();
    for (const lookup of items[members[0]!]!.lookups) for (const resource of found[lookup]!) stored.set(resource.id!, resource);
    const matches = matchStoredResults(members.map((index) => items[index]!.resource), [...stored.values()] as PatientResult[]);
    members.forEach((index, n) => (existing[index] = matches[n]));
  }

  const created = await store.createAll(items.filter((_, index) => !existing[index]).map((item) => item.resource));
  let next = 0;
  const outcomes: { resource: PatientResult; created: boolean }[] = [];
  for (const [index, item] of items.entries()) {
    const stored = existing[index];
    if (!stored) outcomes.push({ resource: created[next++]!, created: true });
    else if (sameContent(stored, item.resource)) outcomes.push({ resource: stored, created: false });
    else outcomes.push({ resource: await store.update<PatientResult>({ ...item.resource, id: stored.id! }), created: false });
  }
  return outcomes;
}
