import { randomUUID } from 'node:crypto';
import type { Patient, Resource } from '@medplum/fhirtypes';
import { Database, type Queryable } from '../../storage/database.ts';
import { uniqueViolation } from '../../storage/errors.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import { createBatched, writeCreatesIn, type PendingCreate, type WriteOne } from './create-batch.ts';
import { indexValues, isResourceId, type IndexValues } from './index-values.ts';
import { activePatientByBusinessIdentifier, present } from './read.ts';
import { isStoredResourceType, patientReferenceElement, type StoredResourceType } from './search-parameters.ts';
import { inTransaction } from './store-transaction.ts';
import { assertValidResource } from './validation.ts';

/**
 * Writes of the versioned store: https://hl7.org/fhir/R4/http.html#create and #update.
 * Every write puts the current row, the version row and the index rows in one transaction.
 */

export function storedType(resourceType: string): StoredResourceType {
  if (!isStoredResourceType(resourceType)) {
    throw new DomainError('unsupported', `resource type ${resourceType} is not stored by this service`, [
      { message: `resource type ${resourceType} is not supported`, location: 'resourceType' },
    ]);
  }
  return resourceType;
}

/** The lock key of a business identifier in a site: its holder alone creates or changes its active patient. */
export function patientIdentifierLockKey(site: SiteContext, identifier: string): string {
  return `patient-business-identifier|${site.siteId}|${identifier}`;
}

/** Serialises writers of one business identifier in one site until the transaction ends. */
export async function lockKey(tx: Queryable, key: string): Promise<void> {
  await tx.query({ name: 'records-lock-key', text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', values: [key] });
}

/**
 * lockKey for several keys in one statement, taken in sorted order, so that two transactions
 * locking overlapping sets wait for each other instead of deadlocking.
 */
export async function lockKeys(tx: Queryable, keys: readonly string[]): Promise<void> {
  const sorted = [...new Set(keys)].sort();
  await tx.query({
    name: 'records-lock-keys',
    text: 'SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM unnest($1::text[]) WITH ORDINALITY AS l(k, n) ORDER BY n',
    values: [sorted],
  });
}

/**
 * One statement (writeRows), so it needs no transaction of its own; outside a transaction,
 * concurrent creates share one (create-batch.ts).
 */
export async function insertResource<T extends Resource>(tx: Queryable, site: SiteContext, resource: T, id: string = randomUUID()): Promise<T> {
  const pending = await pendingCreate(tx, site, resource, id);
  const stored = pending.resource as T;
  if (!(tx instanceof Database)) {
    await writeRows(tx, site, pending.type, stored, pending.values, 'insert');
    return stored;
  }
  if ((await createBatched(tx, pending, writeAlone)) === 'subject-unknown') throw subjectOfCreateNotInSite(pending);
  return stored;
}

/** A new resource as version 1 with a new id, checked, with its index values. */
async function pendingCreate(tx: Queryable, site: SiteContext, resource: Resource, id: string = randomUUID()): Promise<PendingCreate> {
  const type = storedType(resource.resourceType);
  const stored = { ...resource, id, meta: { ...resource.meta, versionId: '1', lastUpdated: new Date().toISOString() } } as Resource;
  const values = await prepare(tx, site, type, stored, undefined);
  return { site, type, resource: stored, values, subject: patientReferenceElement(type) ? values.patientId : null };
}

function subjectOfCreateNotInSite(pending: PendingCreate): DomainError {
  return subjectNotInSite(pending.type, patientReferenceElement(pending.type) ?? 'subject', String(pending.subject));
}

/**
 * Creates several resources with one statement (the batch statement of create-batch.ts), each
 * checked and stored exactly as insertResource stores one, all or none (in the caller's
 * transaction, or one of their own). Patients go one by one: a clash of business identifiers
 * must name the one that clashed.
 */
export async function insertResources<T extends Resource>(db: Queryable, site: SiteContext, resources: readonly T[]): Promise<T[]> {
  return inTransaction(db, async (tx) => {
    if (resources.length < 2 || resources.some((resource) => resource.resourceType === 'Patient')) {
      const stored: T[] = [];
      for (const resource of resources) stored.push(await insertResource(tx, site, resource));
      return stored;
    }
    const creates: PendingCreate[] = [];
    for (const resource of resources) creates.push(await pendingCreate(tx, site, resource));
    const written = await writeCreatesIn(tx, creates);
    const refused = creates.find((create) => !written.has(create.resource.id!));
    if (refused) throw subjectOfCreateNotInSite(refused);
    return creates.map((create) => create.resource as T);
  });
}

/**
 * A new resource checked as insertResource checks it, not yet written: writePreparedCreates
 * writes many in one statement. Separate so that a caller writing many (a transaction Bundle)
 * learns which resource a validation error is about.
 */
export function prepareCreate(tx: Queryable, site: SiteContext, resource: Resource, id: string): Promise<PendingCreate> {
  return pendingCreate(tx, site, resource, id);
}

/**
 * Writes prepared creates in one statement, in the caller's transaction. Those whose subject is
 * not a patient of the site are not written: the first of them is returned, and the caller must
 * roll back (nothing else tells the others apart).
 */
export async function writePreparedCreates(tx: Queryable, creates: readonly PendingCreate[]): Promise<{ refused?: PendingCreate; error?: DomainError }> {
  if ((tx as { inTransaction?: boolean }).inTransaction !== true) throw new Error('writePreparedCreates needs a transaction: a refused row must roll the others back');
  if (creates.length === 0) return {};
  const written = await writeCreatesIn(tx, creates);
  const refused = creates.find((create) => !written.has(create.resource.id!));
  return refused ? { refused, error: subjectOfCreateNotInSite(refused) } : {};
}

/** How a create of a batch is written again on its own when its batch failed on a row. */
const writeAlone: WriteOne = (database, one) => writeRows(database, one.site, one.type, one.resource, one.values, 'insert');

export async function replaceResource<T extends Resource>(
  tx: Queryable,
  site: SiteContext,
  resource: T,
  options: { ifMatchVersion?: string } = {},
): Promise<T> {
  const type = storedType(resource.resourceType);
  const id = resource.id;
  const notFound = () =>
    new DomainError('not-found', `${type}/${id ?? ''} is not known`, [{ message: `${type}/${id ?? ''} is not known`, location: `${type}.id` }]);
  if (typeof id !== 'string' || !isResourceId(id)) throw notFound();
  const { rows } = await tx.query<{ version_id: number }>({
    name: 'records-lock-current',
    text: 'SELECT version_id FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = $3 FOR UPDATE',
    values: [site.siteId, type, id],
  });
  const current = rows[0];
  if (!current) throw notFound();
  // If-Match: * asks only that the resource exists, which it does here.
  if (options.ifMatchVersion !== undefined && options.ifMatchVersion !== '*' && options.ifMatchVersion !== String(current.version_id)) {
    throw new DomainError(
      'precondition-failed',
      `${type}/${id} is at version ${current.version_id}, not ${options.ifMatchVersion}`,
    );
  }
  const stored = {
    ...resource,
    id,
    meta: { ...resource.meta, versionId: String(current.version_id + 1), lastUpdated: new Date().toISOString() },
  } as T;
  const values = await prepare(tx, site, type, stored, id);
  await writeRows(tx, site, type, stored, values, 'update');
  return stored;
}

/**
 * Validates the resource and computes its index values. The subject's existence is checked by
 * the write statement itself (writeRows). An active patient's business identifier is unique in
 * its site by a unique index; an update checks it first under a lock, so that a conflict is a
 * clear error rather than an aborted transaction, while a create relies on the index alone:
 * the store's transactional creators (findOrCreatePatient, createIfNoneExist) already hold the
 * identifier's lock, and a standalone create is one statement that the index answers.
 */
async function prepare(
  tx: Queryable,
  site: SiteContext,
  type: StoredResourceType,
  resource: Resource,
  existingId: string | undefined,
): Promise<IndexValues> {
  assertValidResource(resource);
  const values = indexValues(type, resource);
  const element = patientReferenceElement(type);
  if (values.patientId !== null && element && !isResourceId(values.patientId)) throw subjectNotInSite(type, element, values.patientId);
  if (existingId !== undefined && resource.resourceType === 'Patient' && values.businessIdentifier !== null && values.active) {
    await assertBusinessIdentifierFree(tx, site, values.businessIdentifier, existingId);
  }
  return values;
}

function subjectNotInSite(type: string, element: string, patientId: string): DomainError {
  const message = `Patient/${patientId} is not a patient of this site`;
  return new DomainError('business-rule', message, [{ message, location: `${type}.${element}.reference` }]);
}

async function assertBusinessIdentifierFree(
  tx: Queryable,
  site: SiteContext,
  identifier: string,
  existingId: string | undefined,
): Promise<void> {
  await lockKey(tx, patientIdentifierLockKey(site, identifier));
  const { rows } = await tx.query<{ id: string }>({
    name: 'records-active-patient-id-by-business-identifier',
    text: `SELECT id FROM clinical_resource
            WHERE site_id = $1 AND resource_type = 'Patient' AND active AND business_identifier = $2`,
    values: [site.siteId, identifier],
  });
  if (rows.some((row) => row.id !== existingId)) throw businessIdentifierTaken(identifier);
}

function businessIdentifierTaken(identifier: string): DomainError {
  const message = `an active patient with identifier ${JSON.stringify(identifier)} already exists in this site`;
  return new DomainError('conflict', message, [{ message, location: 'Patient.identifier[0].value' }]);
}

/**
 * A resource's rows as the write statement's parameters $1-$15 take them: site, type, id,
 * version, time, content, then the index values and the token columns as three arrays.
 */
export function rowValues(site: SiteContext, type: StoredResourceType, resource: Resource, values: IndexValues): unknown[] {
  return [
    site.siteId,
    type,
    resource.id,
    Number(resource.meta!.versionId),
    resource.meta!.lastUpdated!,
    resource,
    values.patientId,
    values.businessIdentifier,
    values.active,
    values.nameSearch,
    values.birthDateStart,
    values.birthDateEnd,
    values.tokens.map((token) => token.param),
    values.tokens.map((token) => token.code),
    values.tokens.map((token) => token.system),
  ];
}

/**
 * The current row, the version row and the token rows in one statement (data-modifying CTEs),
 * written only when the resource's subject, if it has one, is a patient of the site: one round
 * trip where five used to be, which is most of the cost of a write on a fast disk. Being one
 * statement, a create is atomic even outside a transaction. An update first drops the previous
 * token rows: a separate statement, because an insert and a delete of the same key in one
 * statement would race for the primary key.
 */
async function writeRows(
  tx: Queryable,
  site: SiteContext,
  type: StoredResourceType,
  resource: Resource,
  values: IndexValues,
  mode: 'insert' | 'update',
): Promise<void> {
  const element = patientReferenceElement(type);
  const subject = element ? values.patientId : null;
  const params = [...rowValues(site, type, resource, values), subject, values.clinicalDateStart, values.clinicalDateEnd];
  if (mode === 'update') {
    await tx.query({
      name: 'records-delete-tokens',
      text: 'DELETE FROM clinical_resource_token WHERE site_id = $1 AND resource_type = $2 AND resource_id = $3',
      values: [site.siteId, type, resource.id],
    });
  }
  const current =
    mode === 'insert'
      ? `INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id,
           business_identifier, active, name_search, birth_date_start, birth_date_end, clinical_date_start, clinical_date_end)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $17::timestamptz, $18::timestamptz FROM subject_known
         RETURNING id`
      : `UPDATE clinical_resource SET version_id = $4, last_updated = $5, content = $6, patient_id = $7,
           business_identifier = $8, active = $9, name_search = $10, birth_date_start = $11, birth_date_end = $12,
           clinical_date_start = $17::timestamptz, clinical_date_end = $18::timestamptz
         FROM subject_known
         WHERE site_id = $1 AND resource_type = $2 AND id = $3
         RETURNING id`;
  let written: number;
  try {
    const { rows } = await tx.query<{ written: number }>({
      name: `records-write-${mode}`,
      text: `WITH subject_known AS (
               SELECT WHERE $16::uuid IS NULL OR EXISTS (
                 SELECT 1 FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient' AND id = $16::uuid)),
             current_row AS (${current}),
             version_row AS (
               INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
               SELECT $1, $2, $3, $4, $5, $6 FROM current_row),
             token_rows AS (
               INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
               SELECT $1, $2, t.param, t.code, t.system, $3
                 FROM current_row, unnest($13::text[], $14::text[], $15::text[]) AS t(param, code, system))
             SELECT count(*)::int AS written FROM current_row`,
      values: params,
    });
    written = rows[0]!.written;
  } catch (error) {
    // Two creates of one active business identifier: the unique index decides (see prepare).
    if (uniqueViolation(error)?.constraint === 'clinical_resource_patient_business_identifier_key' && values.businessIdentifier !== null) {
      throw businessIdentifierTaken(values.businessIdentifier);
    }
    throw error;
  }
  if (written === 0) throw subjectNotInSite(type, element ?? 'subject', String(subject));
}

/** Active patient with this business identifier, read under the identifier's lock. */
export async function lockedPatientByBusinessIdentifier(
  tx: Queryable,
  site: SiteContext,
  identifier: string,
): Promise<Patient | undefined> {
  await lockKey(tx, patientIdentifierLockKey(site, identifier));
  const { rows } = await tx.query<{ content: Patient }>({
    name: 'records-active-patient-by-business-identifier',
    text: activePatientByBusinessIdentifier,
    values: [site.siteId, identifier],
  });
  return rows[0] ? present(rows[0].content) : undefined;
}
