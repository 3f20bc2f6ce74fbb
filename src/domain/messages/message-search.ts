/**
 * Finding messages in a site's log of millions: filters, sorting, keyset paging, jump to an
 * instant, and a bounded total.
 *
 * Order is (received_at, seq), newest or oldest first. A page's `next` cursor is the last row's
 * position ("<microseconds since the epoch>:<seq>"), so the next page starts right after it
 * whatever was logged meanwhile, and every page costs the same however deep (no OFFSET).
 * `at` jumps to an instant: the page starts with the messages received at or before it (newest
 * first) or at or after it (oldest first).
 *
 * The total is exact up to `countBound` and reported as "more than" past it: counting costs one
 * index entry per row, so an exact count of millions would cost seconds on every page, while the
 * operator's question past ten thousand is "narrow the filters", not the exact figure.
 *
 * Every filter is served by an index of migration 0740 (see the large-log test, which checks the
 * plans); the sender filter matches MSH-3 or MSH-4 exactly, the message type exactly (ADT^A01).
 */
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import type { MessageOutcome, MessageProtocol, MessageTransport } from './message-log.ts';
import { summaryColumns, toSummary, type LoggedMessageSummary, type Row } from './message-row.ts';

export const messageSorts = ['newest', 'oldest'] as const;
export type MessageSort = (typeof messageSorts)[number];
export const countBound = 10_000;
export const maxMessagePage = 500;

export interface MessageFilters {
  /** received_at >= from */
  from?: Date;
  /** received_at < to */
  to?: Date;
  messageType?: string;
  outcome?: MessageOutcome;
  controlId?: string;
  patientIdentifier?: string;
  /** MSH-3 or MSH-4 (HL7 v3: sender device or organisation), exactly. */
  sender?: string;
  transport?: MessageTransport;
  protocol?: MessageProtocol;
}

export interface MessageQuery extends MessageFilters {
  sort?: MessageSort;
  limit?: number;
  /** The `next` cursor of the previous page. */
  after?: string;
  /** Start the page at this instant (ignored when `after` is given). */
  at?: Date;
}

export interface MessageSearchPage {
  messages: LoggedMessageSummary[];
  /** Cursor of the following page; absent on the last page. */
  next?: string;
  /** Matching messages (all pages), exact when `totalExact`, else at least that many. */
  total?: number;
  totalExact?: boolean;
}

const cursorPattern = /^(\d{1,20}):(\d{1,18})$/;

export function isMessageCursor(text: string): boolean {
  return cursorPattern.test(text);
}

/** The WHERE clause of the filters, with its values appended to `values` ($1 is the site). */
function filterClause(site: SiteContext, filters: MessageFilters, values: unknown[]): string {
  values.push(site.siteId);
  const conditions = ['site_id = $1'];
  const add = (sql: (n: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(sql(`$${values.length}`));
  };
  if (filters.from) add((n) => `received_at >= ${n}`, filters.from);
  if (filters.to) add((n) => `received_at < ${n}`, filters.to);
  if (filters.messageType) add((n) => `message_type = ${n}`, filters.messageType);
  if (filters.outcome) {
    add((n) => `outcome = ${n}`, filters.outcome);
    // Lets the planner use the small index of failures (its predicate is outcome <> 'processed').
    if (filters.outcome !== 'processed') conditions.push(`outcome <> 'processed'`);
  }
  if (filters.controlId) add((n) => `control_id = ${n}`, filters.controlId);
  if (filters.patientIdentifier) add((n) => `patient_identifier = ${n}`, filters.patientIdentifier);
  if (filters.sender) add((n) => `(sending_application = ${n} OR sending_facility = ${n})`, filters.sender);
  if (filters.transport) add((n) => `transport = ${n}`, filters.transport);
  if (filters.protocol) add((n) => `protocol = ${n}`, filters.protocol);
  return conditions.join(' AND ');
}

const micros = `(extract(epoch FROM received_at) * 1000000)::bigint`;
const fromMicros = (n: string) => `(timestamptz 'epoch' + ${n}::bigint * interval '1 microsecond')`;

export async function searchMessages(db: Queryable, site: SiteContext, query: MessageQuery, options: { count?: boolean } = {}): Promise<MessageSearchPage> {
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), maxMessagePage);
  const newest = (query.sort ?? 'newest') === 'newest';
  const values: unknown[] = [];
  const where = filterClause(site, query, values);
  const cursor = query.after !== undefined ? cursorPattern.exec(query.after) : null;
  let position = '';
  if (cursor) {
    values.push(cursor[1], cursor[2]);
    position = ` AND (received_at, seq) ${newest ? '<' : '>'} (${fromMicros(`$${values.length - 1}`)}, $${values.length}::bigint)`;
  } else if (query.at) {
    values.push(query.at);
    position = ` AND received_at ${newest ? '<=' : '>='} $${values.length}`;
  }
  const direction = newest ? 'DESC' : 'ASC';
  const pageValues = [...values, limit + 1];
  const { rows } = await db.query<Row & { position: string }>(
    `SELECT ${summaryColumns}, ${micros}::text || ':' || seq::text AS position FROM inbound_message
      WHERE ${where}${position} ORDER BY received_at ${direction}, seq ${direction} LIMIT $${pageValues.length}`,
    pageValues,
  );
  const page = rows.slice(0, limit);
  const result: MessageSearchPage = { messages: page.map(toSummary) };
  if (rows.length > limit) result.next = page[page.length - 1]!.position;
  if (options.count !== false) {
    const countValues: unknown[] = [];
    const countWhere = filterClause(site, query, countValues);
    countValues.push(countBound + 1);
    const { rows: counted } = await db.query<{ n: number }>(
      // Ordered as the log is read, so that the bounded count walks the same index as the page
      // instead of a sequential scan that stops early only when the site fills the table.
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM inbound_message WHERE ${countWhere}
         ORDER BY received_at, seq LIMIT $${countValues.length}) AS bounded`,
      countValues,
    );
    const n = counted[0]!.n;
    result.total = Math.min(n, countBound);
    result.totalExact = n <= countBound;
  }
  return result;
}
