import type { Patient, Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { isResourceId } from './index-values.ts';
import { isStoredResourceType } from './search-parameters.ts';

/**
 * Reads of the versioned store: read, vread and instance history
 * (https://hl7.org/fhir/R4/http.html#read, #vread, #history). An id of another site, of an
 * unknown type or of invalid syntax reads exactly like an id that does not exist.
 */

/**
 * jsonb keeps keys in its own order; FHIR JSON reads best with resourceType, id and meta first
 * (https://hl7.org/fhir/R4/json.html), so stored content is presented that way.
 */
export function present<T extends Resource>(content: T): T {
  const { resourceType, id, meta, ...rest } = content as Resource & Record<string, unknown>;
  return { resourceType, id, meta, ...rest } as unknown as T;
}

export async function readCurrent<T extends Resource>(db: Queryable, site: SiteContext, type: string, id: string): Promise<T | undefined> {
  if (!isStoredResourceType(type) || !isResourceId(id)) return undefined;
  // Named: the read by id is the hottest statement, and a prepared one is parsed and planned once
  // per connection instead of on every request.
  const { rows } = await db.query<{ content: T }>({
    name: 'record-read-current',
    text: 'SELECT content FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = $3',
    values: [site.siteId, type, id],
  });
  return rows[0] ? present(rows[0].content) : undefined;
}

export async function readVersion<T extends Resource>(
  db: Queryable,
  site: SiteContext,
  type: string,
  id: string,
  versionId: string,
): Promise<T | undefined> {
  if (!isStoredResourceType(type) || !isResourceId(id) || !/^[1-9]\d{0,8}$/.test(versionId)) return undefined;
  const { rows } = await db.query<{ content: T }>({
    name: 'records-read-version',
    text: `SELECT content FROM clinical_resource_version
            WHERE site_id = $1 AND resource_type = $2 AND id = $3 AND version_id = $4`,
    values: [site.siteId, type, id, Number(versionId)],
  });
  return rows[0] ? present(rows[0].content) : undefined;
}

export interface HistoryPage<T extends Resource> {
  /** Newest first. */
  versions: T[];
  total: number;
}

/**
 * Which versions a history holds (http.html#history): those stored at or after `since`, and
 * those current at some moment of `at` (a version is current from its lastUpdated until the next
 * version's).
 */
export interface HistoryFilter {
  since?: Date;
  at?: { start: Date; end: Date };
}

/** Versions of one resource, newest first; undefined when the resource is not in the site. */
export async function readHistory<T extends Resource>(
  db: Queryable,
  site: SiteContext,
  type: string,
  id: string,
  options: { count: number; beforeVersion?: number } & HistoryFilter,
): Promise<HistoryPage<T> | undefined> {
  if (!isStoredResourceType(type) || !isResourceId(id)) return undefined;
  const current = await db.query<{ version_id: number }>(
    'SELECT version_id FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = $3',
    [site.siteId, type, id],
  );
  const head = current.rows[0];
  if (!head) return undefined;
  const before = options.beforeVersion ?? head.version_id + 1;
  if (options.since === undefined && options.at === undefined) {
    const { rows } = await db.query<{ content: T }>(
      `SELECT content FROM clinical_resource_version
        WHERE site_id = $1 AND resource_type = $2 AND id = $3 AND version_id < $4
        ORDER BY version_id DESC LIMIT $5`,
      [site.siteId, type, id, before, options.count],
    );
    return { versions: rows.map((row) => present(row.content)), total: head.version_id };
  }
  // One resource's versions are few: the window over all of them is cheap, and it gives each
  // version the moment it stopped being current.
  const { rows } = await db.query<{ total: number; versions: T[] }>(
    `WITH version AS (
       SELECT version_id, last_updated, content, lead(last_updated) OVER (ORDER BY version_id) AS superseded
         FROM clinical_resource_version
        WHERE site_id = $1 AND resource_type = $2 AND id = $3),
     matching AS (
       SELECT version_id, content FROM version
        WHERE ($4::timestamptz IS NULL OR last_updated >= $4)
          AND ($5::timestamptz IS NULL OR (last_updated < $6 AND (superseded IS NULL OR superseded > $5))))
     SELECT (SELECT count(*) FROM matching)::int AS total,
            coalesce((SELECT jsonb_agg(content ORDER BY version_id DESC)
                        FROM (SELECT version_id, content FROM matching WHERE version_id < $7 ORDER BY version_id DESC LIMIT $8) page),
                     '[]'::jsonb) AS versions`,
    [site.siteId, type, id, options.since ?? null, options.at?.start ?? null, options.at?.end ?? null, before, options.count],
  );
  const { total, versions } = rows[0]!;
  return { versions: versions.map((content) => present(content)), total };
}

/** The resources of a type carrying an identifier (any system when none is given), oldest first. */
export async function readByIdentifier<T extends Resource>(
  db: Queryable,
  site: SiteContext,
  type: string,
  identifier: { system?: string; value: string },
): Promise<T[]> {
  return (await readByIdentifiers(db, site, [{ type, identifier }]))[0] as T[];
}

/**
 * Several identifier look-ups in one statement: the resources found for each, in the order of
 * the look-ups and, within one, of storage. Driven from the token key, then one primary-key probe
 * per match: the OFFSET 0 fences keep the planner from turning this into a walk of the site's rows
 * in seq order with a token probe per row, which it chose on tables not yet analysed (seconds per
 * look-up at a few thousand rows).
 */
export async function readByIdentifiers(
  db: Queryable,
  site: SiteContext,
  lookups: readonly { type: string; identifier: { system?: string; value: string } }[],
): Promise<Resource[][]> {
  const found: Resource[][] = lookups.map(() => []);
  const asked = lookups.flatMap((lookup, index) => (isStoredResourceType(lookup.type) ? [{ ...lookup, index }] : []));
  if (asked.length === 0) return found;
  const { rows } = await db.query<{ lookup: number; content: Resource }>({
    name: 'records-read-by-identifiers',
    text: `SELECT q.lookup, r.content
             FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS q(lookup, resource_type, code, system)
             CROSS JOIN LATERAL (
               SELECT DISTINCT t.resource_id FROM clinical_resource_token t
                WHERE t.site_id = $1 AND t.resource_type = q.resource_type AND t.param = 'identifier' AND t.code = q.code
                  AND (q.system IS NULL OR t.system = q.system)
               OFFSET 0) m
             CROSS JOIN LATERAL (
               SELECT c.content, c.seq FROM clinical_resource c
                WHERE c.site_id = $1 AND c.resource_type = q.resource_type AND c.id = m.resource_id
               OFFSET 0) r
            ORDER BY q.lookup, r.seq`,
    values: [
      site.siteId,
      asked.map((lookup) => lookup.index),
      asked.map((lookup) => lookup.type),
      asked.map((lookup) => lookup.identifier.value),
      asked.map((lookup) => lookup.identifier.system ?? null),
    ],
  });
  for (const row of rows) found[row.lookup]!.push(present(row.content));
  return found;
}

/** Shared with the locked variant of the writers (write.ts): one prepared statement for both. */
export const activePatientByBusinessIdentifier = `SELECT content FROM clinical_resource
  WHERE site_id = $1 AND resource_type = 'Patient' AND active AND business_identifier = $2`;

export async function readPatientByBusinessIdentifier(db: Queryable, site: SiteContext, value: string): Promise<Patient | undefined> {
  const { rows } = await db.query<{ content: Patient }>({ name: 'records-active-patient-by-business-identifier', text: activePatientByBusinessIdentifier, values: [site.siteId, value] });
  return rows[0] ? present(rows[0].content) : undefined;
}

/** Every stored resource whose subject or patient is the patient, in creation order. */
export async function readPatientCompartment(db: Queryable, site: SiteContext, patientId: string): Promise<Resource[]> {
  if (!isResourceId(patientId)) return [];
  const { rows } = await db.query<{ content: Resource }>(
    'SELECT content FROM clinical_resource WHERE site_id = $1 AND patient_id = $2 ORDER BY seq',
    [site.siteId, patientId],
  );
  return rows.map((row) => present(row.content));
}

/** A page of a patient's compartment ($everything), in creation order after `afterSeq`. */
export interface CompartmentPage {
  resources: Resource[];
  /** Where the next page starts, when there is one. */
  nextSeq?: string;
}

export async function readPatientCompartmentPage(
  db: Queryable,
  site: SiteContext,
  patientId: string,
  options: { count: number; afterSeq: string; since?: Date; types?: string[] },
): Promise<CompartmentPage> {
  if (!isResourceId(patientId)) return { resources: [] };
  const { rows } = await db.query<{ content: Resource; seq: string }>(
    `SELECT content, seq::text AS seq FROM clinical_resource
      WHERE site_id = $1 AND patient_id = $2 AND seq > $3::bigint
        AND ($4::text[] IS NULL OR resource_type = ANY($4::text[]))
        AND ($5::timestamptz IS NULL OR last_updated >= $5::timestamptz)
      ORDER BY seq LIMIT $6`,
    [site.siteId, patientId, options.afterSeq, options.types ?? null, options.since?.toISOString() ?? null, options.count + 1],
  );
  const page = rows.slice(0, options.count);
  const result: CompartmentPage = { resources: page.map((row) => present(row.content)) };
  if (rows.length > options.count && page.length > 0) result.nextSeq = page[page.length - 1]!.seq;
  return result;
}
