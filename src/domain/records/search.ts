import type { Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { isResourceId, normalizeForNameSearch } from './index-values.ts';
import { present } from './read.ts';
import type { StoredResourceType } from './search-parameters.ts';

/**
 * The search engine of the store, in domain terms: conditions are ANDed, the values inside one
 * condition ORed (https://hl7.org/fhir/R4/search.html#combining). Every condition is served by an
 * index of migration 0100, and paging is keyset paging, so a page costs the same wherever it is.
 */

export type ComparisonPrefix = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** system undefined: any system; system '': no system; code undefined: any code of the system. */
export interface TokenValue {
  system?: string;
  code?: string;
}

export type SearchCondition =
  | { kind: 'id'; ids: string[] }
  | { kind: 'token'; param: string; values: TokenValue[] }
  | { kind: 'patient'; ids: string[] }
  | { kind: 'name'; values: string[] }
  | { kind: 'birthdate'; values: { prefix: ComparisonPrefix; start: string; end: string }[] }
  | { kind: 'last-updated'; values: { prefix: ComparisonPrefix; start: Date; end: Date }[] };

export type SearchSort = 'created' | '_lastUpdated' | '-_lastUpdated';

/** Where the previous page ended. `asOf` bounds _lastUpdated-sorted paging (see below). */
export interface SearchPosition {
  seq: string;
  lastUpdated?: string;
  asOf?: string;
}

export interface SearchRequest {
  type: StoredResourceType;
  conditions: SearchCondition[];
  sort: SearchSort;
  count: number;
  after?: SearchPosition;
  total: SearchTotal;
}

/**
 * How to count the matches (search.html#total). Counting costs in proportion to the matches, so
 * by default ('bounded') the total is exact up to `exactTotalLimit` matches and left out above;
 * 'estimate' gives the planner's estimate above it, 'accurate' always counts.
 */
export type SearchTotal = 'none' | 'bounded' | 'estimate' | 'accurate';

export const exactTotalLimit = 10_000;

export interface SearchResult {
  resources: Resource[];
  total?: number;
  /** Present when there is another page. */
  next?: SearchPosition;
}

class SqlBuilder {
  readonly params: unknown[] = [];
  add(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
}

/** The SQL of one search page and of its total; exposed so that tests can EXPLAIN it. */
export interface SearchSql {
  /** count(*) of the matches, at most `exactTotalLimit + 1` unless the total must be accurate. */
  count: { text: string; values: unknown[] };
  /** The matches without a limit, for the planner's estimate. */
  matches: { text: string; values: unknown[] };
  page: { text: string; values: unknown[] };
  asOf: string | undefined;
}

export function searchSql(site: SiteContext, request: SearchRequest): SearchSql {
  const sql = new SqlBuilder();
  const where = [`r.site_id = ${sql.add(site.siteId)}`, `r.resource_type = ${sql.add(request.type)}`];
  for (const condition of request.conditions) where.push(conditionSql(sql, condition));

  // Creation order (seq) never changes, so default paging has no duplicates or gaps while
  // resources are updated. Ordered by _lastUpdated, an update moves a resource; so every page
  // of such a search sees the data as of its first page: resources changed later are left out
  // (a client syncing with _lastUpdated=gt… picks them up) rather than shown twice.
  const lastUpdatedSort = request.sort !== 'created';
  const asOf = lastUpdatedSort ? (request.after?.asOf ?? new Date().toISOString()) : undefined;
  if (asOf !== undefined) where.push(`r.last_updated <= ${sql.add(asOf)}::timestamptz`);
  const matching = `SELECT 1 FROM clinical_resource r WHERE ${where.join(' AND ')}`;
  const count = {
    text:
      request.total === 'accurate'
        ? `SELECT count(*)::int AS n FROM (${matching}) m`
        : `SELECT count(*)::int AS n FROM (${matching} LIMIT ${exactTotalLimit + 1}) m`,
    values: [...sql.params],
  };
  const matches = { text: matching, values: [...sql.params] };

  const pageWhere = [...where];
  const after = request.after;
  let order: string;
  if (request.sort === 'created') {
    if (after) pageWhere.push(`r.seq > ${sql.add(after.seq)}::bigint`);
    order = 'r.seq ASC';
  } else {
    const direction = request.sort === '_lastUpdated' ? '>' : '<';
    if (after?.lastUpdated) {
      pageWhere.push(`(r.last_updated, r.seq) ${direction} (${sql.add(after.lastUpdated)}::timestamptz, ${sql.add(after.seq)}::bigint)`);
    }
    order = request.sort === '_lastUpdated' ? 'r.last_updated ASC, r.seq ASC' : 'r.last_updated DESC, r.seq DESC';
  }
  // Two steps: choose the page's ids from the indexes alone (the primary key includes seq
  // and last_updated), then read the content of those rows only; sorting thousands of matches
  // then never drags their JSON along.
  const page = {
    text: `SELECT c.content, p.seq::text AS seq, p.last_updated
      FROM (SELECT r.id, r.seq, r.last_updated FROM clinical_resource r
             WHERE ${pageWhere.join(' AND ')} ORDER BY ${order} LIMIT ${sql.add(request.count + 1)}) p
      JOIN clinical_resource c ON c.site_id = $1 AND c.resource_type = $2 AND c.id = p.id
      ORDER BY ${order.replaceAll('r.', 'p.')}`,
    values: sql.params,
  };
  return { count, matches, page, asOf };
}

export async function searchResources(db: Queryable, site: SiteContext, request: SearchRequest): Promise<SearchResult> {
  const sql = searchSql(site, request);
  let total: number | undefined;
  if (request.total !== 'none') {
    const counted = (await db.query<{ n: number }>(sql.count.text, sql.count.values)).rows[0]!.n;
    if (request.total === 'accurate' || counted <= exactTotalLimit) total = counted;
    else if (request.total === 'estimate') total = Math.max(counted, await estimate(db, sql.matches));
  }
  const { rows } = await db.query<{ content: Resource; seq: string; last_updated: Date }>(sql.page.text, sql.page.values);
  const page = rows.slice(0, request.count);
  const last = page[page.length - 1];
  const result: SearchResult = { resources: page.map((row) => present(row.content)) };
  if (total !== undefined) result.total = total;
  if (rows.length > request.count && last) {
    result.next = { seq: last.seq };
    if (sql.asOf !== undefined) {
      // Stored from meta.lastUpdated, so millisecond precision round-trips exactly.
      result.next.lastUpdated = last.last_updated.toISOString();
      result.next.asOf = sql.asOf;
    }
  }
  return result;
}

async function estimate(db: Queryable, query: { text: string; values: unknown[] }): Promise<number> {
  const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${query.text}`, query.values);
  return Math.round((rows[0]!['QUERY PLAN'] as { Plan: { 'Plan Rows': number } }[])[0]!.Plan['Plan Rows']);
}

function conditionSql(sql: SqlBuilder, condition: SearchCondition): string {
  switch (condition.kind) {
    case 'id': {
      const ids = condition.ids.filter(isResourceId);
      return ids.length === 0 ? 'false' : `r.id = ANY(${sql.add(ids)}::uuid[])`;
    }
    case 'patient': {
      const ids = condition.ids.filter(isResourceId);
      return ids.length === 0 ? 'false' : `r.patient_id = ANY(${sql.add(ids)}::uuid[])`;
    }
    case 'token': {
      const alternatives = condition.values.map((value) => {
        const parts: string[] = [];
        if (value.code !== undefined) parts.push(`t.code = ${sql.add(value.code)}`);
        if (value.system !== undefined) parts.push(`t.system = ${sql.add(value.system)}`);
        return parts.length === 0 ? 'true' : `(${parts.join(' AND ')})`;
      });
      // A correlated EXISTS becomes a semi-join, so the planner can either start from the token
      // index (rare values: identifier) or walk the page order and probe each row's tokens
      // through clinical_resource_token_resource_idx (common values: gender), whichever is cheaper.
      return `EXISTS (SELECT 1 FROM clinical_resource_token t
        WHERE t.site_id = r.site_id AND t.resource_type = r.resource_type AND t.resource_id = r.id
          AND t.param = ${sql.add(condition.param)} AND (${alternatives.join(' OR ')}))`;
    }
    case 'name':
      return `(${condition.values
        .map((value) => `r.name_search LIKE ${sql.add(`%${escapeLike(normalizeForNameSearch(value))}%`)}`)
        .join(' OR ')})`;
    case 'birthdate':
      return `(${condition.values
        .map((value) => rangeSql(value.prefix, 'r.birth_date_start', 'r.birth_date_end', () => `${sql.add(value.start)}::date`, () => `${sql.add(value.end)}::date`, true))
        .join(' OR ')})`;
    case 'last-updated':
      return `(${condition.values
        .map((value) =>
          rangeSql(
            value.prefix,
            'r.last_updated',
            'r.last_updated',
            () => `${sql.add(timestampText(value.start))}::timestamptz`,
            () => `${sql.add(timestampText(value.end))}::timestamptz`,
            false,
          ),
        )
        .join(' OR ')})`;
  }
}

/**
 * FHIR date comparison of a target range [low, high] with a search range [start, end]
 * (search.html#prefix). Day ranges are inclusive at both ends; instant ranges end exclusively.
 */
function rangeSql(
  prefix: ComparisonPrefix,
  low: string,
  high: string,
  start: () => string,
  end: () => string,
  inclusiveEnd: boolean,
): string {
  // Parameters are added only when used: PostgreSQL refuses unreferenced ones.
  // For day ranges, eq also bounds both ends from both sides (equivalent, since low <= high): the
  // planner estimates a bounded range well, and two open-ended ones badly.
  const eq = () => {
    if (!inclusiveEnd) return `(${low} >= ${start()} AND ${high} < ${end()})`;
    const s = start();
    const e = end();
    return `(${low} >= ${s} AND ${low} <= ${e} AND ${high} >= ${s} AND ${high} <= ${e})`;
  };
  switch (prefix) {
    case 'eq':
      return eq();
    case 'ne':
      return `(${low} IS NOT NULL AND NOT ${eq()})`;
    case 'lt':
      return `${low} < ${start()}`;
    case 'le':
      return inclusiveEnd ? `${low} <= ${end()}` : `${low} < ${end()}`;
    case 'gt':
      return inclusiveEnd ? `${high} > ${end()}` : `${high} >= ${end()}`;
    case 'ge':
      return `${high} >= ${start()}`;
  }
}

/**
 * An instant as PostgreSQL reads it. FHIR instants run from year 1 to 9999, but a range bound can
 * fall outside (9999-12-31T23:59:59Z ends at year 10000; 0001-01-01T00:00:00+14:00 starts in
 * year 0 UTC), which toISOString writes in a form PostgreSQL refuses. No stored instant lies out
 * there, so such a bound is the infinity on its side and every comparison stays exact.
 */
function timestampText(instant: Date): string {
  const year = instant.getUTCFullYear();
  if (year > 9999) return 'infinity';
  if (year < 1) return '-infinity';
  return instant.toISOString();
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}
