/**
 * The site's inbound message log, shared by HL7 v2 and HL7 v3 intake.
 *
 * Use: inside the transaction that applies a message, call recordMessage after the clinical
 * changes; commit; only then send the acknowledgement (DESIGN.md section 2, durability). Before
 * applying, findLoggedMessage(key) tells whether this sender already delivered this control id:
 * if so, answer with the stored ackText and change nothing. Two copies racing past that check
 * meet at the unique index: recordMessage then throws a DuplicateMessageError (the transaction
 * itself stays usable), the caller rolls back, and answers with findLoggedMessage's stored ACK.
 */
import { randomUUID } from 'node:crypto';
import type { NamedStatement, Queryable, Transaction } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { summaryColumns, toSummary, type LoggedMessageSummary, type Row } from './message-row.ts';
import { searchMessages } from './message-search.ts';

export type { LoggedMessageSummary } from './message-row.ts';

export type MessageProtocol = 'hl7v2' | 'hl7v3';
export type MessageTransport = 'http' | 'mllp';
/**
 * processed: applied (AA / CA); error: refused for its content (AE); rejected: refused for its
 * kind (AR); refused: an MLLP sender whose MSH-3/MSH-4 matched no integration client (AR, never
 * processed; see refused-message.ts).
 */
export type MessageOutcome = 'processed' | 'error' | 'rejected' | 'refused';

/** Who sent which message: the idempotency key within a site. */
export interface MessageKey {
  protocol: MessageProtocol;
  /** v2: MSH-3 as ER7 text; v3: sender device id (root^extension). */
  sendingApplication: string;
  /** v2: MSH-4; v3: sender organisation id, or ''. */
  sendingFacility: string;
  /** v2: MSH-10; v3: message id. */
  controlId: string;
}

export interface MessageProblem {
  severity: 'error' | 'warning' | 'information';
  /** Protocol code, e.g. HL7 table 0357 "101". */
  code: string;
  location?: string;
  message: string;
}

export interface NewMessage {
  protocol: MessageProtocol;
  transport: MessageTransport;
  sendingApplication: string;
  sendingFacility: string;
  /** undefined when the message had no readable control id (never deduplicated then). */
  controlId?: string;
  messageType: string;
  outcome: MessageOutcome;
  ackCode: string;
  problems: MessageProblem[];
  /** The acknowledgement exactly as sent, returned again for a duplicate. */
  ackText: string;
  raw: Uint8Array;
  remoteAddress?: string;
  receivedAt?: Date;
  /** The message's patient (HL7 v2 PID-3, first identifier), for finding a patient's messages. */
  patientIdentifier?: string;
  /** Set on a reprocessed attempt: the failed message it re-ran (message-reprocess.ts). */
  reprocessOf?: string;
}

export interface LoggedMessage extends LoggedMessageSummary {
  ackText: string;
  /** null once the site's message body retention has purged it (bodyPurgedAt says when). */
  raw: Buffer | null;
  bodyPurgedAt: string | null;
}

/** The predicate of the idempotency key's unique index (migration 0740), repeated so that the planner uses it. */
const idempotencyPredicate = `control_id IS NOT NULL AND reprocess_of IS NULL AND (outcome <> 'refused' OR reprocessed_as IS NOT NULL)`;

export class DuplicateMessageError extends Error {
  override readonly name = 'DuplicateMessageError';
}

/**
 * The message this sender delivered with this control id; when it failed and an operator has
 * since reprocessed it successfully, the accepted attempt (whose acknowledgement a re-send gets).
 */
export async function findLoggedMessage(db: Queryable, site: SiteContext, key: MessageKey): Promise<LoggedMessage | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${summaryColumns}, ack_text, raw, body_purged_at FROM inbound_message
      WHERE site_id = $1 AND protocol = $2 AND sending_application = $3 AND sending_facility = $4 AND control_id = $5
        AND ${idempotencyPredicate}`,
    [site.siteId, key.protocol, key.sendingApplication, key.sendingFacility, key.controlId],
  );
  const row = rows[0];
  if (row?.reprocessed_as) return (await getMessage(db, site, row.reprocessed_as)) ?? loggedMessage(row);
  return row ? loggedMessage(row) : undefined;
}

function loggedMessage(row: Row): LoggedMessage {
  return { ...toSummary(row), ackText: row.ack_text!, raw: row.raw ?? null, bodyPurgedAt: row.body_purged_at?.toISOString() ?? null };
}

const insertColumns = `site_id, id, protocol, transport, sending_application, sending_facility, control_id,
       message_type, outcome, ack_code, problems, ack_text, raw, remote_address, received_at, patient_identifier, reprocess_of, client_id, api_key_id`;
// ON CONFLICT DO NOTHING instead of catching the violation: the caller's transaction stays
// usable without a savepoint (two round trips fewer per message).
const insertStatement = `INSERT INTO inbound_message (${insertColumns})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
     ON CONFLICT (site_id, protocol, sending_application, sending_facility, control_id) WHERE ${idempotencyPredicate} DO NOTHING`;

/**
 * The log entry's columns in the order of insertColumns; the one-statement write of a new
 * patient's message (patients/new-patient-message.ts) takes them in that order too.
 */
export function entryValues(site: SiteContext, id: string, message: NewMessage): unknown[] {
  return [
    site.siteId,
    id,
    message.protocol,
    message.transport,
    message.sendingApplication,
    message.sendingFacility,
    message.controlId === undefined || message.controlId === '' ? null : message.controlId,
    message.messageType,
    message.outcome,
    message.ackCode,
    JSON.stringify(message.problems),
    message.ackText,
    Buffer.from(message.raw),
    message.remoteAddress ?? null,
    message.receivedAt ?? new Date(),
    message.patientIdentifier ? message.patientIdentifier.slice(0, 200) : null,
    message.reprocessOf ?? null,
    // What authenticated the delivery (the dashboard's per-client and per-key activity).
    site.actor.kind === 'integration-client' ? site.actor.clientId : null,
    site.actor.kind === 'api-key' ? site.actor.keyId : null,
  ];
}

/**
 * Writes one log entry in the caller's transaction; throws DuplicateMessageError on a repeated key.
 *
 * `alongside` are the caller's last writes of other tables (an HL7 v2 visit, for instance): they
 * go out in the same statement, as data-modifying CTEs, which saves a round trip per write. They
 * are made even when the key is a repeat, so a caller passing any must roll back on
 * DuplicateMessageError. Their text must not contain `$` other than in parameters ($1, $2, ...),
 * which are renumbered after the log entry's own.
 */
export async function recordMessage(tx: Transaction, site: SiteContext, message: NewMessage, alongside: readonly NamedStatement[] = []): Promise<{ id: string }> {
  const id = randomUUID();
  const values = entryValues(site, id, message);
  if (message.reprocessOf !== undefined && message.outcome === 'processed') {
    // The failed message points at its accepted attempt; only one attempt can take that place,
    // so a second reprocess racing this one rolls back here instead of applying the message twice.
    const { rowCount } = await tx.query(
      'UPDATE inbound_message SET reprocessed_as = $3 WHERE site_id = $1 AND id = $2 AND reprocessed_as IS NULL AND outcome <> \'processed\'',
      [site.siteId, message.reprocessOf, id],
    );
    if (rowCount !== 1) throw new DuplicateMessageError('this message was already reprocessed and accepted');
  }
  let logged: boolean;
  if (alongside.length === 0) {
    const { rowCount } = await tx.query({ name: 'message-log-insert', text: insertStatement, values });
    logged = rowCount === 1;
  } else {
    const ctes: string[] = [];
    for (const [index, write] of alongside.entries()) {
      const offset = values.length;
      ctes.push(`w${index} AS (${write.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`)})`);
      values.push(...write.values);
    }
    const { rows } = await tx.query<{ logged: number }>({
      name: ['message-log-insert', ...alongside.map((write) => write.name)].join('+'),
      text: `WITH ${ctes.join(', ')}, entry AS (${insertStatement} RETURNING 1) SELECT count(*)::int AS logged FROM entry`,
      values,
    });
    logged = rows[0]!.logged === 1;
  }
  if (!logged) throw new DuplicateMessageError('this sender already delivered a message with this control id');
  return { id };
}

export interface MessagePage {
  messages: LoggedMessageSummary[];
  /** Pass as `before` to read the next (older) page; absent on the last page. */
  nextBefore?: string;
}

/** Newest first, unfiltered. `before` is the cursor of a previous page (see searchMessages). */
export async function listMessages(db: Queryable, site: SiteContext, options: { limit?: number; before?: string } = {}): Promise<MessagePage> {
  const page = await searchMessages(db, site, { limit: options.limit ?? 50, ...(options.before !== undefined ? { after: options.before } : {}) }, { count: false });
  return { messages: page.messages, ...(page.next ? { nextBefore: page.next } : {}) };
}

/** One message with its raw bytes and acknowledgement; undefined for another site's id. */
export async function getMessage(db: Queryable, site: SiteContext, id: string): Promise<LoggedMessage | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const { rows } = await db.query<Row>(`SELECT ${summaryColumns}, ack_text, raw, body_purged_at FROM inbound_message WHERE site_id = $1 AND id = $2`, [site.siteId, id]);
  const row = rows[0];
  return row ? loggedMessage(row) : undefined;
}
