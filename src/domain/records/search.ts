import type { Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { timestampText } from './fhir-date.ts';
import { isResourceId, normalizeForNameSearch } from './index-values.ts';
import { present } from './read.ts';
import { searchParameters, type NamePart, type StoredResourceType } from './search-parameters.ts';

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
  | { kind: 'name-part'; part: NamePart; values: string[] }
  | { kind: 'birthdate'; values: { prefix: ComparisonPrefix; start: string; end: string }[] }
  | { kind: 'last-updated'; values: { prefix: ComparisonPrefix; start: Date; end: Date }[] }
  | { kind: 'clinical-date'; values: { prefix: ComparisonPrefix; start: Date; end: Date }[] };

/**
 * One key of _sort (search.html#sort): `_id`, `_lastUpdated` or a search parameter of the type.
 * No keys: creation order.
 */
export interface SearchSortKey {
  key: string;
  descending: boolean;
}

export type SearchSort = SearchSortKey[];

/**
 * Where the previous page ended: the last row's sort key values (as text, null for a missing
 * value) and its seq. `asOf` bounds sorted paging (see below). `lastUpdated` is the single key of
 * tokens made before several keys were supported.
 */
export interface SearchPosition {
  seq: string;
  keys?: (string | null)[];
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

/** A sort key as SQL: its expression over `r`, the type its cursor value casts back to, whether it can be null. */
interface SortColumn {
  expression: string;
  cast: string;
  nullable: boolean;
}

/** The sort keys a type accepts: _id, _lastUpdated and every search parameter of the type. */
export function sortableKeys(type: StoredResourceType): string[] {
  return ['_id', '_lastUpdated', ...searchParameters[type].map((parameter) => parameter.name)];
}

function sortColumn(sql: SqlBuilder, type: StoredResourceType, key: SearchSortKey): SortColumn {
  if (key.key === '_id') return { expression: 'r.id', cast: 'uuid', nullable: false };
  if (key.key === '_lastUpdated') return { expression: 'r.last_updated', cast: 'timestamptz', nullable: false };
  const parameter = searchParameters[type].find((candidate) => candidate.name === key.key);
  if (!parameter) throw new Error(`${type} has no sort key ${key.key}`);
  switch (parameter.index.kind) {
    case 'patient-reference':
      return { expression: 'r.patient_id', cast: 'uuid', nullable: true };
    case 'name':
      return { expression: 'r.name_search', cast: 'text', nullable: true };
    case 'name-part':
      // The first such part of the first name that has one (as normalized for search).
      return { expression: `(${namePartsSql(sql, parameter.index.part)})[1]`, cast: 'text', nullable: true };
    case 'birthdate':
      // A partial date is a range: ascending orders by its first day, descending by its last.
      return { expression: key.descending ? 'r.birth_date_end' : 'r.birth_date_start', cast: 'date', nullable: true };
    case 'clinical-date':
      return { expression: key.descending ? 'r.clinical_date_end' : 'r.clinical_date_start', cast: 'timestamptz', nullable: true };
    case 'token':
      // Several codes: ascending orders by the lowest, descending by the highest (as R5 says).
      return {
        expression: `(SELECT ${key.descending ? 'max' : 'min'}(t.code) FROM clinical_resource_token t
          WHERE t.site_id = r.site_id AND t.resource_type = r.resource_type AND t.resource_id = r.id AND t.param = ${sql.add(parameter.name)})`,
        cast: 'text',
        nullable: true,
      };
  }
}

/**
 * The rows strictly after the cursor in the order of `keys` then seq, missing values last in
 * either direction. All keys non-null in one direction: one row comparison, which an index on
 * those columns serves as a range; otherwise the expanded form
 * (k1 after v1) OR (k1 = v1 AND ((k2 after v2) OR (k2 = v2 AND …))).
 */
function afterCursorSql(sql: SqlBuilder, columns: SortColumn[], keys: SearchSortKey[], values: (string | null)[], seq: string, seqDescending: boolean): string {
  const seqValue = `${sql.add(seq)}::bigint`;
  const direction = (descending: boolean) => (descending ? '<' : '>');
  if (columns.every((column) => !column.nullable) && keys.every((key) => key.descending === seqDescending)) {
    const left = [...columns.map((column) => column.expression), 'r.seq'];
    const right = [...columns.map((column, index) => `${sql.add(values[index])}::${column.cast}`), seqValue];
    return `(${left.join(', ')}) ${direction(seqDescending)} (${right.join(', ')})`;
  }
  let condition = `r.seq ${direction(seqDescending)} ${seqValue}`;
  for (let index = columns.length - 1; index >= 0; index--) {
    const { expression, cast } = columns[index]!;
    const value = values[index];
    if (value === null || value === undefined) {
      // After a missing value come only other rows missing it (missing values are last).
      condition = `(${expression} IS NULL AND ${condition})`;
    } else {
      const bound = `${sql.add(value)}::${cast}`;
      condition = `(${expression} ${direction(keys[index]!.descending)} ${bound} OR ${expression} IS NULL OR (${expression} = ${bound} AND ${condition}))`;
    }
  }
  return condition;
}

export function searchSql(site: SiteContext, request: SearchRequest): SearchSql {
  const sql = new SqlBuilder();
  const where = [`r.site_id = ${sql.add(site.siteId)}`, `r.resource_type = ${sql.add(request.type)}`];
  for (const condition of request.conditions) where.push(conditionSql(sql, condition));

  // Creation order (seq) never changes, so default paging has no duplicates or gaps while
  // resources are updated. Under _sort an update can move a resource (a new _lastUpdated, a new
  // code); so every page of a sorted search sees the data as of its first page: resources
  // changed or created later are left out (a client syncing with _lastUpdated=gt… picks them up)
  // rather than shown twice or skipped.
  const sorted = request.sort.length > 0;
  const asOf = sorted ? (request.after?.asOf ?? new Date().toISOString()) : undefined;
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
  const columns = request.sort.map((key) => sortColumn(sql, request.type, key));
  // The tie-break follows the last key's direction, so that a single key (_lastUpdated either
  // way) walks its index (site_id, resource_type, last_updated, seq) in one direction.
  const seqDescending = request.sort[request.sort.length - 1]?.descending ?? false;
  const keyValues = after?.keys ?? (after?.lastUpdated !== undefined ? [after.lastUpdated] : undefined);
  if (after && (!sorted || keyValues)) {
    pageWhere.push(sorted ? afterCursorSql(sql, columns, request.sort, keyValues!, after.seq, seqDescending) : `r.seq > ${sql.add(after.seq)}::bigint`);
  }
  const order = (alias: string, outer: boolean) => [
    ...request.sort.map((key, index) => {
      const nulls = columns[index]!.nullable ? ' NULLS LAST' : '';
      return `${outer ? `${alias}.k${index}` : `k${index}`} ${key.descending ? 'DESC' : 'ASC'}${nulls}`;
    }),
    `${alias}.seq ${seqDescending ? 'DESC' : 'ASC'}`,
  ].join(', ');
  const keyOutputs = columns.map((column, index) => `, ${column.expression} AS k${index}`).join('');
  const keyTexts = columns.map((_column, index) => `, p.k${index}::text AS t${index}`).join('');
  // Two steps: choose the page's ids from the indexes alone (the primary key includes seq
  // and last_updated), then read the content of those rows only; sorting thousands of matches
  // then never drags their JSON along.
  const page = {
    text: `SELECT c.content, p.seq::text AS seq${keyTexts}
      FROM (SELECT r.id, r.seq${keyOutputs} FROM clinical_resource r
             WHERE ${pageWhere.join(' AND ')} ORDER BY ${order('r', false)} LIMIT ${sql.add(request.count + 1)}) p
      JOIN clinical_resource c ON c.site_id = $1 AND c.resource_type = $2 AND c.id = p.id
      ORDER BY ${order('p', true)}`,
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
  const { rows } = await db.query<{ content: Resource; seq: string; [key: `t${number}`]: string | null }>(sql.page.text, sql.page.values);
  const page = rows.slice(0, request.count);
  const last = page[page.length - 1];
  const result: SearchResult = { resources: page.map((row) => present(row.content)) };
  if (total !== undefined) result.total = total;
  if (rows.length > request.count && last) {
    result.next = { seq: last.seq };
    if (sql.asOf !== undefined) {
      // As PostgreSQL writes them, so each casts back to exactly the value it was.
      result.next.keys = request.sort.map((_key, index) => last[`t${index}`] ?? null);
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
    case 'name-part': {
      // The name index finds the patients with the value anywhere in a name (a superset); the
      // parts are then checked one by one.
      const parts = namePartsSql(sql, condition.part);
      return `(${condition.values
        .map((value) => {
          const normalized = escapeLike(normalizeForNameSearch(value));
          return `(r.name_search LIKE ${sql.add(`%${normalized}%`)} AND EXISTS (SELECT 1 FROM unnest(${parts}) AS part WHERE part LIKE ${sql.add(`${normalized}%`)}))`;
        })
        .join(' OR ')})`;
    }
    case 'birthdate':
      return `(${condition.values
        .map((value) => rangeSql(value.prefix, 'r.birth_date_start', 'r.birth_date_end', () => `${sql.add(value.start)}::date`, () => `${sql.add(value.end)}::date`, 'days'))
        .join(' OR ')})`;
    case 'clinical-date':
      return instantRangesSql(sql, condition.values, 'r.clinical_date_start', 'r.clinical_date_end', 'span');
    case 'last-updated':
      return instantRangesSql(sql, condition.values, 'r.last_updated', 'r.last_updated', 'point');
  }
}

/**
 * A Patient's family or given names as normalized for search (migration 0895): read from
 * name_search, which the service writes, so that they are normalized exactly as the search value.
 */
function namePartsSql(sql: SqlBuilder, part: NamePart): string {
  return `cg_patient_name_parts(r.content, r.name_search, ${sql.add(part)})`;
}

/** Values of an instant parameter, ORed. */
function instantRangesSql(sql: SqlBuilder, values: { prefix: ComparisonPrefix; start: Date; end: Date }[], low: string, high: string, stored: StoredRange): string {
  const bound = (instant: Date) => () => `${sql.add(timestampText(instant))}::timestamptz`;
  return `(${values.map((value) => rangeSql(value.prefix, low, high, bound(value.start), bound(value.end), stored)).join(' OR ')})`;
}

/**
 * How a target's bounds are stored: `days`, the first and last day of a date (both inclusive);
 * `point`, one instant in both (last_updated); `span`, the first instant and the instant just
 * after the last (exclusive), as stored for clinical dates.
 */
type StoredRange = 'days' | 'point' | 'span';

/**
 * FHIR date comparison of a target range [low, high] with a search range [start, end]
 * (search.html#prefix). A search range of days is inclusive at both ends, one of instants ends
 * exclusively. eq: the search range contains the target's; ne: it does not; lt, gt: the target
 * starts before, or ends after, the search range; le, ge: as lt, gt, or overlapping it.
 */
function rangeSql(
  prefix: ComparisonPrefix,
  low: string,
  high: string,
  start: () => string,
  end: () => string,
  stored: StoredRange,
): string {
  // Parameters are added only when used: PostgreSQL refuses unreferenced ones.
  // For day ranges, eq also bounds both ends from both sides (equivalent, since low <= high): the
  // planner estimates a bounded range well, and two open-ended ones badly.
  const eq = () => {
    if (stored === 'point') return `(${low} >= ${start()} AND ${high} < ${end()})`;
    if (stored === 'span') return `(${low} >= ${start()} AND ${high} <= ${end()})`;
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
      return stored === 'days' ? `${low} <= ${end()}` : `${low} < ${end()}`;
    case 'gt':
      return stored === 'point' ? `${high} >= ${end()}` : `${high} > ${end()}`;
    case 'ge':
      return stored === 'span' ? `${high} > ${start()}` : `${high} >= ${start()}`;
  }
}

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}
