import { randomUUID } from 'node:crypto';
import type { Patient, Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import { uniqueViolation } from '../../storage/errors.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import { indexValues, isResourceId, type IndexValues } from './index-values.ts';
import { present } from './read.ts';
import { isStoredResourceType, patientReferenceElement, type StoredResourceType } from './search-parameters.ts';
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

/** Serialises writers of one business identifier in one site until the transaction ends. */
export async function lockKey(tx: Queryable, key: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
}

export async function insertResource<T extends Resource>(tx: Queryable, site: SiteContext, resource: T): Promise<T> {
  const type = storedType(resource.resourceType);
  const stored = {
    ...resource,
    id: randomUUID(),
    meta: { ...resource.meta, versionId: '1', lastUpdated: new Date().toISOString() },
  } as T;
  const values = await prepare(tx, site, type, stored, undefined);
  await writeRows(tx, site, type, stored, values, 'insert');
  return stored;
}

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
  const { rows } = await tx.query<{ version_id: number }>(
    'SELECT version_id FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = $3 FOR UPDATE',
    [site.siteId, type, id],
  );
  const current = rows[0];
  if (!current) throw notFound();
  if (options.ifMatchVersion !== undefined && options.ifMatchVersion !== String(current.version_id)) {
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
  if (values.patientId !== null && element) {
    const exists =
      isResourceId(values.patientId) &&
      (
        await tx.query('SELECT 1 FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = $3', [
          site.siteId,
          'Patient',
          values.patientId,
        ])
      ).rowCount === 1;
    if (!exists) {
      const message = `Patient/${values.patientId} is not a patient of this site`;
      throw new DomainError('business-rule', message, [{ message, location: `${type}.${element}.reference` }]);
    }
  }
  if (resource.resourceType === 'Patient' && values.businessIdentifier !== null && values.active) {
    await assertBusinessIdentifierFree(tx, site, values.businessIdentifier, existingId);
  }
  return values;
}

async function assertBusinessIdentifierFree(
  tx: Queryable,
  site: SiteContext,
  identifier: string,
  existingId: string | undefined,
): Promise<void> {
  await lockKey(tx, `patient-business-identifier|${site.siteId}|${identifier}`);
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM clinical_resource
      WHERE site_id = $1 AND resource_type = 'Patient' AND active AND business_identifier = $2`,
    [site.siteId, identifier],
  );
  if (rows.some((row) => row.id !== existingId)) throw businessIdentifierTaken(identifier);
}

function businessIdentifierTaken(identifier: string): DomainError {
  const message = `an active patient with identifier ${JSON.stringify(identifier)} already exists in this site`;
  return new DomainError('conflict', message, [{ message, location: 'Patient.identifier[0].value' }]);
}

async function writeRows(
  tx: Queryable,
  site: SiteContext,
  type: StoredResourceType,
  resource: Resource,
  values: IndexValues,
  mode: 'insert' | 'update',
): Promise<void> {
  const version = Number(resource.meta!.versionId);
  const lastUpdated = resource.meta!.lastUpdated!;
  const params = [
    site.siteId,
    type,
    resource.id,
    version,
    lastUpdated,
    resource,
    values.patientId,
    values.businessIdentifier,
    values.active,
    values.nameSearch,
    values.birthDateStart,
    values.birthDateEnd,
  ];
  try {
    if (mode === 'insert') {
      await tx.query(
        `INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id,
           business_identifier, active, name_search, birth_date_start, birth_date_end)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        params,
      );
    } else {
      await tx.query(
        `UPDATE clinical_resource SET version_id = $4, last_updated = $5, content = $6, patient_id = $7,
           business_identifier = $8, active = $9, name_search = $10, birth_date_start = $11, birth_date_end = $12
         WHERE site_id = $1 AND resource_type = $2 AND id = $3`,
        params,
      );
      await tx.query('DELETE FROM clinical_resource_token WHERE site_id = $1 AND resource_type = $2 AND resource_id = $3', [
        site.siteId,
        type,
        resource.id,
      ]);
    }
  } catch (error) {
    // The advisory lock above makes this unreachable for writers that use this store; the unique
    // index still guards against any that do not.
    if (uniqueViolation(error) && values.businessIdentifier !== null) throw businessIdentifierTaken(values.businessIdentifier);
    throw error;
  }
  await tx.query(
    `INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [site.siteId, type, resource.id, version, lastUpdated, resource],
  );
  if (values.tokens.length > 0) {
    await tx.query(
      `INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
       SELECT $1, $2, t.param, t.code, t.system, $3 FROM unnest($4::text[], $5::text[], $6::text[]) AS t(param, code, system)`,
      [
        site.siteId,
        type,
        resource.id,
        values.tokens.map((token) => token.param),
        values.tokens.map((token) => token.code),
        values.tokens.map((token) => token.system),
      ],
    );
  }
}

/** Active patient with this business identifier, read under the identifier's lock. */
export async function lockedPatientByBusinessIdentifier(
  tx: Queryable,
  site: SiteContext,
  identifier: string,
): Promise<Patient | undefined> {
  await lockKey(tx, `patient-business-identifier|${site.siteId}|${identifier}`);
  const { rows } = await tx.query<{ content: Patient }>(
    `SELECT content FROM clinical_resource
      WHERE site_id = $1 AND resource_type = 'Patient' AND active AND business_identifier = $2`,
    [site.siteId, identifier],
  );
  return rows[0] ? present(rows[0].content) : undefined;
}
