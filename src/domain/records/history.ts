import type { Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { isResourceId } from './index-values.ts';
import { present, type HistoryFilter } from './read.ts';
import { exactTotalLimit } from './search.ts';
import type { StoredResourceType } from './search-parameters.ts';

/**
 * Type- and system-level history (https://hl7.org/fhir/R4/http.html#history): every version of
 * the site's resources of some types, newest first. Paged by the last version shown, (lastUpdated,
 * id, versionId) in that order: versions are never changed, and a version written after the first
 * page is newer than every cursor, so pages have no duplicates or gaps while others write. Each
 * type is one range of clinical_resource_version_time_idx; several types are merged.
 */

export interface VersionCursor {
  /** As PostgreSQL writes the timestamp, so that it casts back exactly. */
  lastUpdated: string;
  id: string;
  versionId: number;
}

export interface VersionsPage {
  versions: Resource[];
  /** Exact up to `exactTotalLimit` versions, left out above. */
  total?: number;
  next?: VersionCursor;
}

export async function readVersionsByTime(
  db: Queryable,
  site: SiteContext,
  types: readonly StoredResourceType[],
  options: { count: number; before?: VersionCursor } & HistoryFilter,
): Promise<VersionsPage> {
  const values: unknown[] = [site.siteId];
  const add = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const filters: string[] = [];
  if (options.since) filters.push(`v.last_updated >= ${add(options.since)}::timestamptz`);
  if (options.at) {
    // Current at some moment of [start, end): stored before its end, not superseded by its start.
    filters.push(`v.last_updated < ${add(options.at.end)}::timestamptz`);
    filters.push(`NOT EXISTS (SELECT 1 FROM clinical_resource_version n
      WHERE n.site_id = v.site_id AND n.resource_type = v.resource_type AND n.id = v.id
        AND n.version_id = v.version_id + 1 AND n.last_updated <= ${add(options.at.start)}::timestamptz)`);
  }
  const filtered = filters.map((filter) => ` AND ${filter}`).join('');
  let total: number | undefined;
  const typeList = add([...types]);
  const counted = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM clinical_resource_version v
      WHERE v.site_id = $1 AND v.resource_type = ANY(${typeList}::text[])${filtered} LIMIT ${exactTotalLimit + 1}) m`,
    values,
  );
  if (counted.rows[0]!.n <= exactTotalLimit) total = counted.rows[0]!.n;
  values.pop();

  const before = options.before && isResourceId(options.before.id) ? options.before : undefined;
  const cursor = before
    ? ` AND (v.last_updated, v.id, v.version_id) < (${add(before.lastUpdated)}::timestamptz, ${add(before.id)}::uuid, ${add(before.versionId)}::int)`
    : '';
  const limit = add(options.count + 1);
  const order = 'last_updated DESC, id DESC, version_id DESC';
  const branches = types.map(
    (type) => `(SELECT v.resource_type, v.id, v.version_id, v.last_updated FROM clinical_resource_version v
      WHERE v.site_id = $1 AND v.resource_type = ${add(type)}${filtered}${cursor}
      ORDER BY v.${order.replaceAll(', ', ', v.')} LIMIT ${limit})`,
  );
  const { rows } = await db.query<{ content: Resource; id: string; version_id: number; last_updated: string }>(
    `SELECT c.content, p.id::text AS id, p.version_id, p.last_updated::text AS last_updated
       FROM (SELECT * FROM (${branches.join(' UNION ALL ')}) u ORDER BY ${order} LIMIT ${limit}) p
       JOIN clinical_resource_version c
         ON c.site_id = $1 AND c.resource_type = p.resource_type AND c.id = p.id AND c.version_id = p.version_id
      ORDER BY p.${order.replaceAll(', ', ', p.')}`,
    values,
  );
  const page = rows.slice(0, options.count);
  const result: VersionsPage = { versions: page.map((row) => present(row.content)) };
  if (total !== undefined) result.total = total;
  const last = page[page.length - 1];
  if (rows.length > options.count && last) result.next = { lastUpdated: last.last_updated, id: last.id, versionId: last.version_id };
  return result;
}
