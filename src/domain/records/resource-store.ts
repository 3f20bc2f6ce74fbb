import type { Patient, Resource } from '@medplum/fhirtypes';
import type { Queryable, Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import {
  readByIdentifier,
  readByIdentifiers,
  readCurrent,
  readHistory,
  readPatientByBusinessIdentifier,
  readPatientCompartment,
  readPatientCompartmentPage,
  readVersion,
  type CompartmentPage,
  type HistoryFilter,
  type HistoryPage,
} from './read.ts';
import { searchResources, type SearchRequest, type SearchResult } from './search.ts';
import { inTransaction } from './store-transaction.ts';
import type { PendingCreate } from './create-batch.ts';
import { insertResource, insertResources, lockedPatientByBusinessIdentifier, lockKey, lockKeys, prepareCreate, replaceResource, writePreparedCreates } from './write.ts';

/**
 * The versioned, site-scoped clinical record store that every surface writes through (FHIR,
 * HL7 v2/v3, imaging). The site is fixed when the store is made, so no call can reach another
 * site's rows. Given a Transaction, every call runs inside it (the caller commits); given the
 * Database, each write runs in a transaction of its own.
 */
export interface ResourceStore {
  readonly site: SiteContext;
  /**
   * Stores a new resource: new UUID id (a client id is ignored), meta.versionId "1", meta.lastUpdated.
   * `options.id` is a UUID the caller drew (randomUUID) when other resources must name the new one
   * before it is stored (a transaction Bundle); it is still the service's id, never the client's.
   */
  create<T extends Resource>(resource: T, options?: { id?: string }): Promise<T>;
  /** The current version; undefined for an unknown, foreign or syntactically invalid id. */
  read<T extends Resource>(type: T['resourceType'], id: string): Promise<T | undefined>;
  vread<T extends Resource>(type: T['resourceType'], id: string, versionId: string): Promise<T | undefined>;
  /** A new version. DomainError 'not-found' when the id is not in the site, 'precondition-failed' on a stale version. */
  update<T extends Resource>(resource: T, options?: { ifMatchVersion?: string }): Promise<T>;
  /** Versions newest first; undefined when the resource is not in the site. */
  history<T extends Resource>(
    type: T['resourceType'],
    id: string,
    options?: { count?: number; beforeVersion?: number } & HistoryFilter,
  ): Promise<HistoryPage<T> | undefined>;
  findByIdentifier<T extends Resource>(type: T['resourceType'], identifier: { system?: string; value: string }): Promise<T[]>;
  /** The active patient whose business identifier (identifier[0].value) is `value`. */
  findPatientByBusinessIdentifier(value: string): Promise<Patient | undefined>;
  /**
   * The active patient with that business identifier, or a new one made from `build()`, atomically:
   * concurrent callers with one identifier get the same patient. `build` must give a Patient whose
   * identifier[0].value is `value`.
   */
  findOrCreatePatient(value: string, build: () => Patient): Promise<{ patient: Patient; created: boolean }>;
  /** Every non-Patient resource whose subject/patient is the patient, in creation order. */
  listPatientCompartment(patientId: string): Promise<Resource[]>;
  /** A page of that list after `afterSeq` ('0' first), of the given types and changed since `since`. */
  patientCompartmentPage(patientId: string, options: { count: number; afterSeq: string; since?: Date; types?: string[] }): Promise<CompartmentPage>;
  search(request: SearchRequest): Promise<SearchResult>;
  /**
   * Runs `find` and, when it finds nothing, `create`, while holding a lock on `criteriaKey` in this
   * site: concurrent conditional creates with the same criteria make exactly one resource
   * (https://hl7.org/fhir/R4/http.html#ccreate).
   */
  createIfNoneExist<T extends Resource>(
    criteriaKey: string,
    find: (store: ResourceStore) => Promise<Resource[]>,
    resource: T,
  ): Promise<ConditionalCreateOutcome<T>>;
  /**
   * Conditional update (https://hl7.org/fhir/R4/http.html#cond-update) under the same lock as
   * createIfNoneExist on the same criteria, so that concurrent conditional updates (and creates)
   * with one set of criteria make at most one resource. One match: a new version of it (the
   * resource's id, when given, must be the match's). No match: a new resource when `mayCreate`,
   * else 'no-match'. Several: 'ambiguous', nothing written.
   */
  updateIfOneMatches<T extends Resource>(
    criteriaKey: string,
    find: (store: ResourceStore) => Promise<Resource[]>,
    resource: T,
    options: { mayCreate: boolean; ifMatchVersion?: string },
  ): Promise<ConditionalUpdateOutcome<T>>;
  /**
   * Several identifier look-ups, each under the lock a conditional create on that identifier
   * takes (https://hl7.org/fhir/R4/http.html#ccreate), so that until the caller's transaction
   * ends no one else creates a resource the look-up would have found: the keys are locked in one
   * statement (sorted, so that two callers with overlapping look-ups cannot deadlock) and looked
   * up in one. What each found, in the order of the look-ups, oldest first.
   */
  findEachByIdentifierLocked(lookups: readonly IdentifierLookup[]): Promise<Resource[][]>;
  /**
   * Takes, until the caller's transaction ends, the locks createIfNoneExist and updateIfOneMatches
   * take on each of these criteria, all in one statement in sorted order, so that two transactions
   * taking overlapping sets wait for each other instead of deadlocking. Only inside a transaction.
   */
  lockConditionalCriteria(criteria: readonly { type: string; criteriaKey: string }[]): Promise<void>;
  /**
   * Checks a new resource as create does (validation, index values) without writing it; inside a
   * transaction, createPrepared then writes many in one statement (one round trip for all).
   */
  prepareCreate<T extends Resource>(resource: T, options: { id: string }): Promise<PreparedCreate<T>>;
  /**
   * Writes prepared creates in one statement in the caller's transaction. When a subject is not a
   * patient of the site, answers the first such create and its error, and the caller must roll
   * back. Only inside a transaction.
   */
  createPrepared(creates: readonly PreparedCreate<Resource>[]): Promise<{ refused?: PreparedCreate<Resource>; error?: DomainError }>;
  /** Stores several new resources as create does, in one statement: all or none. */
  createAll<T extends Resource>(resources: readonly T[]): Promise<T[]>;
}

/** A create checked and ready to write: `resource` is what will be stored (id, meta). */
export interface PreparedCreate<T extends Resource> {
  readonly resource: T;
  readonly pending: PendingCreate;
}

export type ConditionalCreateOutcome<T extends Resource> =
  | { outcome: 'created'; resource: T }
  | { outcome: 'exists'; resource: Resource }
  | { outcome: 'ambiguous'; count: number };

export type ConditionalUpdateOutcome<T extends Resource> =
  | { outcome: 'created'; resource: T }
  | { outcome: 'updated'; resource: T }
  | { outcome: 'no-match' }
  | { outcome: 'ambiguous'; count: number };

/** Resources of a type carrying an identifier (of any system when none is given). */
export interface IdentifierLookup {
  type: string;
  identifier: { system?: string; value: string };
}

/** The conditional-create criteria of an identifier look-up, as the lock key names it. */
function identifierCriteria(identifier: { system?: string; value: string }): string {
  return `identifier=${identifier.system ?? ''}|${identifier.value}`;
}

export function resourceStore(db: Queryable, site: SiteContext): ResourceStore {
  const store: ResourceStore = {
    site,
    // A create is a single statement: atomic in the caller's transaction or on its own.
    create: (resource, options = {}) => insertResource(db, site, resource, options.id),
    read: (type, id) => readCurrent(db, site, type, id),
    vread: (type, id, versionId) => readVersion(db, site, type, id, versionId),
    update: (resource, options) => inTransaction(db, (tx) => replaceResource(tx, site, resource, options)),
    history: (type, id, options = {}) => readHistory(db, site, type, id, { ...options, count: options.count ?? 100 }),
    findByIdentifier: (type, identifier) => readByIdentifier(db, site, type, identifier),
    findPatientByBusinessIdentifier: (value) => readPatientByBusinessIdentifier(db, site, value),
    findOrCreatePatient: (value, build) =>
      inTransaction(db, async (tx) => {
        const existing = await lockedPatientByBusinessIdentifier(tx, site, value);
        if (existing) return { patient: existing, created: false };
        const patient = build();
        if (patient.identifier?.[0]?.value !== value) {
          throw new DomainError('invalid', 'the new patient must carry the business identifier as identifier[0].value', [
            { message: 'identifier[0].value differs from the business identifier looked up', location: 'Patient.identifier[0].value' },
          ]);
        }
        return { patient: await insertResource(tx, site, patient), created: true };
      }),
    listPatientCompartment: (patientId) => readPatientCompartment(db, site, patientId),
    patientCompartmentPage: (patientId, options) => readPatientCompartmentPage(db, site, patientId, options),
    search: (request) => searchResources(db, site, request),
    findEachByIdentifierLocked: (lookups) =>
      inTransaction(db, async (tx) => {
        await lockKeys(tx, lookups.map((lookup) => conditionalCreateKey(site, lookup.type, identifierCriteria(lookup.identifier))));
        return readByIdentifiers(tx, site, lookups);
      }),
    createAll: (resources) => insertResources(db, site, resources),
    prepareCreate: async <T extends Resource>(resource: T, options: { id: string }) => {
      const pending = await prepareCreate(db, site, resource, options.id);
      return { resource: pending.resource as T, pending };
    },
    createPrepared: async (creates) => {
      const { refused, error } = await writePreparedCreates(db, creates.map((create) => create.pending));
      const create = refused ? creates.find((one) => one.pending === refused) : undefined;
      return create && error ? { refused: create, error } : {};
    },
    lockConditionalCriteria: async (criteria) => {
      if ((db as Partial<Transaction>).inTransaction !== true) throw new Error('lockConditionalCriteria needs a transaction: the locks last until it ends');
      await lockKeys(db, criteria.map((one) => conditionalCreateKey(site, one.type, one.criteriaKey)));
    },
    createIfNoneExist: (criteriaKey, find, resource) =>
      inTransaction(db, async (tx) => {
        await lockKey(tx, conditionalCreateKey(site, resource.resourceType, criteriaKey));
        const found = await find(resourceStore(tx, site));
        if (found.length === 1) return { outcome: 'exists' as const, resource: found[0]! };
        if (found.length > 1) return { outcome: 'ambiguous' as const, count: found.length };
        return { outcome: 'created' as const, resource: await insertResource(tx, site, resource) };
      }),
    updateIfOneMatches: (criteriaKey, find, resource, options) =>
      inTransaction(db, async (tx): Promise<ConditionalUpdateOutcome<typeof resource>> => {
        await lockKey(tx, conditionalCreateKey(site, resource.resourceType, criteriaKey));
        const found = await find(resourceStore(tx, site));
        if (found.length > 1) return { outcome: 'ambiguous', count: found.length };
        const match = found[0];
        if (!match) return options.mayCreate ? { outcome: 'created', resource: await insertResource(tx, site, resource) } : { outcome: 'no-match' };
        if (resource.id !== undefined && resource.id !== match.id) {
          // http.html#cond-update: one match whose id differs from the body's is a 400.
          const message = `the resource id ${JSON.stringify(resource.id)} differs from the id of the ${match.resourceType} the criteria match (${match.id})`;
          throw new DomainError('invalid', message, [{ message, location: `${match.resourceType}.id` }]);
        }
        const versionCheck = options.ifMatchVersion === undefined ? {} : { ifMatchVersion: options.ifMatchVersion };
        return { outcome: 'updated', resource: await replaceResource(tx, site, { ...resource, id: match.id }, versionCheck) };
      }),
  };
  return store;
}

/**
 * The key a conditional create or update holds until its transaction ends, so that two with the
 * same criteria never both create.
 */
function conditionalCreateKey(site: SiteContext, type: string, criteriaKey: string): string {
  return `conditional-create|${site.siteId}|${type}|${criteriaKey}`;
}

export type { HistoryPage } from './read.ts';
export { exactTotalLimit } from './search.ts';
export type { ComparisonPrefix, SearchCondition, SearchPosition, SearchRequest, SearchResult, SearchSort, SearchTotal, TokenValue } from './search.ts';
