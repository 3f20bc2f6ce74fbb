import { randomUUID } from 'node:crypto';
import type { BundleEntry as FhirBundleEntry, Resource } from '@medplum/fhirtypes';
import { resourceStore, type PreparedCreate, type ResourceStore } from '../../domain/records/resource-store.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Queryable } from '../../storage/database.ts';
import { resourceDefinition } from '../capability/resource-definitions.ts';
import { versionOfETag } from '../http/resource-response.ts';
import { formPairs } from '../routes/fhir-context.ts';
import { assertUpdateId, bodyIdOf, checkedResource, matchCriteria, noMatchError, updateCreateRefused, type MatchCriteria } from '../routes/write-rules.ts';
import type { BundleEntry } from './bundle-entries.ts';
import { entryFailure } from './entry-failure.ts';
import { writtenEntry, type ReturnPreference } from './entry-response.ts';
import { conditionalReference, isBundleLocalUrn, referencesIn, rewriteReferences } from './references.ts';

/**
 * The writes of a transaction Bundle (https://hl7.org/fhir/R4/http.html#transaction), all in the
 * caller's database transaction: any failure throws, naming the entry, and nothing is kept.
 *
 * 1. Every conditional create and update takes its criteria's lock (the lock a conditional create
 *    or update of its own takes), all in one statement in sorted order, so that transactions with
 *    overlapping criteria queue instead of deadlocking, and no one else creates a match until
 *    this transaction ends.
 * 2. Every entry's identity is settled before anything is written: a new id for a create (drawn
 *    here, so that resources written earlier can already name it), the match of a conditional
 *    create or update, the id of an update. Two entries settling on one resource fail the whole.
 * 3. Every fullUrl is mapped to its Type/id and every reference in every resource rewritten:
 *    urn:uuid: and urn:oid: references that name no entry, and conditional references that match
 *    no or several resources, fail the whole.
 * 4. The writes run: creates then updates (http.html#transaction), patients first, since the
 *    store checks in the same statement that a resource's subject is a patient of the site; the
 *    creates of other types go in one statement.
 */

export interface PlannedWrite {
  entry: BundleEntry;
  resource: Resource;
  bodyId: string | undefined;
  ifMatch: string | undefined;
  criteria: MatchCriteria | undefined;
  /** A conditional update or an update of Patient may create when nothing matches. */
  mayCreate: boolean;
}

type Settled = { action: 'create'; id: string } | { action: 'update'; id: string } | { action: 'exists'; resource: Resource };

/** Checks an entry's body, criteria and headers before the transaction begins. */
export function planWrite(entry: BundleEntry, site: SiteContext): PlannedWrite {
  try {
    const { definition, target } = entry;
    const resource = checkedResource(entry.resource, definition.type);
    const ifMatch = versionOfETag(entry.ifMatch);
    if (ifMatch === null) throw new HttpProblem(400, 'invalid', 'request.ifMatch must be an ETag such as W/"3"');
    if (target.interaction === 'create') {
      const criteria = entry.ifNoneExist === undefined ? undefined : matchCriteria(definition, formPairs(entry.ifNoneExist.replace(/^[^?]*\?/, ''), 'ifNoneExist'), 'ifNoneExist');
      return { entry, resource, bodyId: undefined, ifMatch: undefined, criteria, mayCreate: true };
    }
    const bodyId = bodyIdOf(entry.resource, definition.type);
    const policyAllowsCreate = !definition.putWithoutIdCreates || site.policies.patientPutCreates;
    if (target.interaction === 'update') {
      assertUpdateId(definition, bodyId, target.id);
      const mayCreate = definition.putWithoutIdCreates && bodyId === undefined && ifMatch === undefined && site.policies.patientPutCreates;
      return { entry, resource, bodyId, ifMatch, criteria: undefined, mayCreate };
    }
    if (target.interaction !== 'conditional-update') throw new Error(`planWrite: ${target.interaction} is no write`);
    const criteria = matchCriteria(definition, formPairs(target.query, 'request.url'), 'a conditional update');
    return { entry, resource, bodyId, ifMatch, criteria, mayCreate: bodyId === undefined && ifMatch === undefined && policyAllowsCreate };
  } catch (error) {
    throw entryFailure(entry, error);
  }
}

/** Two conditional writes with the same criteria would each decide alone what one decision should. */
export function assertDistinctCriteria(writes: readonly PlannedWrite[]): void {
  const seen = new Map<string, PlannedWrite>();
  for (const write of writes) {
    if (!write.criteria) continue;
    const key = `${write.entry.definition.type}|${write.criteria.key}`;
    const earlier = seen.get(key);
    if (earlier) {
      throw entryFailure(write.entry, new HttpProblem(400, 'invalid', `its conditional criteria are those of entry ${earlier.entry.index}: the outcome would be ambiguous`));
    }
    seen.set(key, write);
  }
}

export async function runTransactionWrites(
  tx: Queryable,
  site: SiteContext,
  writes: readonly PlannedWrite[],
  base: string,
  preference: ReturnPreference,
): Promise<Map<number, FhirBundleEntry>> {
  const store = resourceStore(tx, site);
  await store.lockConditionalCriteria(
    writes.flatMap((write) => (write.criteria ? [{ type: write.entry.definition.type, criteriaKey: write.criteria.key }] : [])),
  );

  const settled = new Map<PlannedWrite, Settled>();
  const identities = new Map<string, PlannedWrite>();
  for (const write of writes) {
    const outcome = await guarded(write.entry, () => settle(store, write));
    settled.set(write, outcome);
    const identity = `${write.entry.definition.type}/${outcome.action === 'exists' ? outcome.resource.id : outcome.id}`;
    const other = identities.get(identity);
    if (other) throw entryFailure(write.entry, new HttpProblem(400, 'invalid', `it names ${identity}, as entry ${other.entry.index} does: one transaction changes a resource once`));
    identities.set(identity, write);
  }

  const resolved = new Map<string, string>();
  for (const write of writes) {
    const outcome = settled.get(write)!;
    if (write.entry.fullUrl !== undefined) resolved.set(write.entry.fullUrl, `${write.entry.definition.type}/${outcome.action === 'exists' ? outcome.resource.id : outcome.id}`);
  }
  for (const write of writes) {
    for (const { reference, location } of referencesIn(write.resource)) {
      if (resolved.has(reference)) continue;
      const at = `${write.entry.definition.type}.${location}`;
      if (isBundleLocalUrn(reference)) {
        throw entryFailure(write.entry, new HttpProblem(400, 'invalid', `the reference ${reference} (${at}) names no entry of this Bundle`));
      }
      const conditional = conditionalReference(reference);
      if (conditional) resolved.set(reference, await guarded(write.entry, () => resolveConditionalReference(store, conditional, reference, at)));
    }
  }

  const order = (write: PlannedWrite) => {
    const outcome = settled.get(write)!;
    return [write.entry.definition.type === 'Patient' ? 0 : 1, outcome.action === 'update' ? 1 : 0];
  };
  const sorted = [...writes].sort((a, b) => {
    const [x, y] = [order(a), order(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || identityOf(a, settled).localeCompare(identityOf(b, settled));
  });
  const answers = new Map<number, FhirBundleEntry>();
  // Creates other than patients are written together, in one statement (one round trip for all).
  let prepared: { write: PlannedWrite; create: PreparedCreate<Resource> }[] = [];
  const flush = async () => {
    const { refused, error } = await store.createPrepared(prepared.map((one) => one.create));
    if (refused) throw entryFailure(prepared.find((one) => one.create === refused)!.write.entry, error);
    for (const { write, create } of prepared) answers.set(write.entry.index, writtenEntry(base, 201, create.resource, preference));
    prepared = [];
  };
  for (const write of sorted) {
    const outcome = settled.get(write)!;
    if (outcome.action === 'exists') {
      answers.set(write.entry.index, writtenEntry(base, 200, outcome.resource, preference));
      continue;
    }
    const resource = rewriteReferences(write.resource, resolved) as Resource;
    if (outcome.action === 'create' && resource.resourceType !== 'Patient') {
      prepared.push({ write, create: await guarded(write.entry, () => store.prepareCreate(resource, { id: outcome.id })) });
      continue;
    }
    if (prepared.length > 0) await flush();
    const stored = await guarded(write.entry, () =>
      outcome.action === 'create'
        ? store.create(resource, { id: outcome.id })
        : store.update({ ...resource, id: outcome.id }, write.ifMatch === undefined ? {} : { ifMatchVersion: write.ifMatch }),
    );
    answers.set(write.entry.index, writtenEntry(base, outcome.action === 'create' ? 201 : 200, stored, preference));
  }
  if (prepared.length > 0) await flush();
  return answers;
}

function identityOf(write: PlannedWrite, settled: Map<PlannedWrite, Settled>): string {
  const outcome = settled.get(write)!;
  return `${write.entry.definition.type}/${outcome.action === 'exists' ? outcome.resource.id : outcome.id}`;
}

/** What the entry will do, decided under the locks of step 1. */
async function settle(store: ResourceStore, write: PlannedWrite): Promise<Settled> {
  const { definition, target } = write.entry;
  const type = definition.type;
  if (target.interaction === 'update') {
    const existing = await store.read(type as Resource['resourceType'], target.id);
    if (existing) return { action: 'update', id: target.id };
    if (write.mayCreate) return { action: 'create', id: randomUUID() };
    throw updateCreateRefused(type, target.id);
  }
  if (!write.criteria) return { action: 'create', id: randomUUID() };
  const found = await write.criteria.find(store);
  if (found.length > 1) {
    const what = target.interaction === 'create' ? 'ifNoneExist' : 'the criteria of the conditional update';
    throw new HttpProblem(412, 'precondition-failed', `${what} match more than one ${type}`);
  }
  const match = found[0];
  if (target.interaction === 'create') return match ? { action: 'exists', resource: match } : { action: 'create', id: randomUUID() };
  if (!match) {
    if (write.mayCreate) return { action: 'create', id: randomUUID() };
    throw noMatchError(type, write.bodyId, write.ifMatch);
  }
  if (write.bodyId !== undefined && write.bodyId !== match.id) {
    throw new HttpProblem(400, 'invalid', `the resource id ${JSON.stringify(write.bodyId)} differs from the id of the ${type} the criteria match (${match.id})`);
  }
  return { action: 'update', id: match.id! };
}

/** http.html#trules: a reference Type?criteria becomes the one resource the criteria match. */
async function resolveConditionalReference(store: ResourceStore, conditional: { type: string; query: string }, reference: string, at: string): Promise<string> {
  const definition = resourceDefinition(conditional.type);
  if (!definition?.stored) throw new HttpProblem(400, 'invalid', `the conditional reference ${reference} (${at}) is not to a type this server searches in a transaction`);
  const found = await matchCriteria(definition, formPairs(conditional.query, 'a conditional reference'), 'a conditional reference').find(store);
  if (found.length !== 1) {
    throw new HttpProblem(412, 'precondition-failed', `the conditional reference ${reference} (${at}) matches ${found.length === 0 ? 'no' : 'more than one'} ${conditional.type}`);
  }
  return `${conditional.type}/${found[0]!.id}`;
}

async function guarded<T>(entry: BundleEntry, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw entryFailure(entry, error);
  }
}
