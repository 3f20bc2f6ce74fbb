/**
 * messages list: the site's message log with the admin app's filters; messages show: one message
 * with its raw text, the acknowledgement sent and its reprocessed attempts (both recorded in the
 * data access log, like the admin app's); messages reprocess: run a failed message again. Exit status: 0 done (reprocess: the attempt was accepted), 1 refused or
 * failed (no such message, already accepted, database), 2 usage, 3 reprocessed but the attempt
 * was not accepted (its ACK is printed).
 */
import { DomainError } from '../../domain/errors.ts';
import { getMessage, type LoggedMessageSummary } from '../../domain/messages/message-log.ts';
import { reprocessAttempts, reprocessMessage } from '../../domain/messages/message-reprocess.ts';
import { displayRaw } from '../../domain/messages/message-text.ts';
import { maxMessagePage, messageSorts, searchMessages, type MessageQuery } from '../../domain/messages/message-search.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import { hl7v2Rerun } from '../../hl7v2/intake/rerun.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { recordOperatorRead } from '../record-read.ts';
import { withDatabase } from '../with-database.ts';

export const notAcceptedExitCode = 3;

const outcomes = { AA: 'processed', AE: 'error', AR: 'rejected', refused: 'refused' } as const;

function instant(options: CommandOptions, name: string): Date | undefined {
  const text = options.optional(name);
  if (text === undefined) return undefined;
  const value = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(value.getTime())) throw new UsageError(`--${name} must be an ISO 8601 date or instant (2026-01-31 or 2026-01-31T08:00:00Z)`);
  return value;
}

function oneOf<T extends string>(options: CommandOptions, name: string, allowed: readonly T[]): T | undefined {
  const value = options.optional(name);
  if (value !== undefined && !(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of: ${allowed.join(', ')}`);
  return value as T | undefined;
}

function text(options: CommandOptions, name: string): string | undefined {
  const value = options.optional(name);
  if (value !== undefined && (value === '' || value.length > 200)) throw new UsageError(`--${name} must be 1 to 200 characters`);
  return value;
}

/** The search of the command line's options (the same filters as the admin API). */
export function messageQueryFromOptions(options: CommandOptions): MessageQuery {
  const limit = Number(options.optional('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > maxMessagePage) throw new UsageError(`--limit must be 1 to ${maxMessagePage}`);
  const after = options.optional('after');
  if (after !== undefined && !/^\d{1,20}:\d{1,18}$/.test(after)) throw new UsageError('--after must be the next cursor a previous page printed');
  const outcome = oneOf(options, 'outcome', Object.keys(outcomes) as (keyof typeof outcomes)[]);
  const values = {
    from: instant(options, 'from'),
    to: instant(options, 'to'),
    at: instant(options, 'at'),
    messageType: text(options, 'type'),
    controlId: text(options, 'control-id'),
    patientIdentifier: text(options, 'patient'),
    sender: text(options, 'sender'),
    transport: oneOf(options, 'transport', ['http', 'mllp'] as const),
    protocol: oneOf(options, 'protocol', ['hl7v2', 'hl7v3'] as const),
    sort: oneOf(options, 'sort', messageSorts),
    outcome: outcome ? outcomes[outcome] : undefined,
    after,
  };
  return { limit, ...Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) };
}

function row(message: LoggedMessageSummary) {
  return {
    id: message.id,
    received_at: message.receivedAt,
    protocol: message.protocol,
    transport: message.transport,
    type: message.messageType,
    control_id: message.controlId,
    patient: message.patientIdentifier,
    sender: [message.sendingApplication, message.sendingFacility].filter(Boolean).join('@'),
    remote_address: message.remoteAddress,
    ack: message.ackCode,
    outcome: message.outcome,
    reprocess_of: message.reprocessOf,
    reprocessed_as: message.reprocessedAs,
    problems: message.problems.map((problem) => `${problem.severity}: ${problem.message}`),
  };
}

export async function messagesCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'reprocess') return reprocessCommand(options, positionals, json);
  if (action === 'show') return showCommand(options, positionals, json);
  const query = messageQueryFromOptions(options);
  const page = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const found = await searchMessages(db, site, query);
    const criteria = Object.entries(query).filter(([, value]) => value !== undefined).map(([name, value]): [string, string] => [name, value instanceof Date ? value.toISOString() : String(value)]);
    await recordOperatorRead(db, site.siteId, { interaction: 'search', resourceType: 'Message', query: new URLSearchParams(criteria).toString(), resourceIds: found.messages.map((message) => message.id), patientIds: [] });
    return found;
  });
  const rows = page.messages.map(row);
  const total = { total: page.total, total_exact: page.totalExact };
  print({ messages: rows, ...(page.next ? { next: page.next } : {}), ...total }, json, () =>
    formatTable(rows, ['received_at', 'protocol', 'transport', 'type', 'control_id', 'sender', 'ack', 'outcome', 'patient', 'problems']) +
    `\n${page.totalExact ? page.total : `more than ${page.total}`} matching` +
    (page.next ? `\n(next page: --after ${page.next})` : ''),
  );
}

async function reprocessCommand(options: CommandOptions, positionals: string[], json: boolean): Promise<void> {
  const [messageId] = positionals;
  if (!messageId || positionals.length > 1) throw new UsageError('messages reprocess takes one message id');
  const result = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    return reprocessMessage(db, site, messageId, hl7v2Rerun(db));
  });
  print({ original: row(result.original), attempt: row(result.attempt) }, json, () =>
    `attempt ${result.attempt.id}: ${result.attempt.ackCode} (${result.attempt.outcome})` +
    (result.attempt.problems.length ? `\n${result.attempt.problems.map((p) => `  ${p.severity}: ${p.message}`).join('\n')}` : ''),
  );
  if (result.attempt.outcome !== 'processed') process.exitCode = notAcceptedExitCode;
}

async function showCommand(options: CommandOptions, positionals: string[], json: boolean): Promise<void> {
  const [messageId] = positionals;
  if (!messageId || positionals.length > 1) throw new UsageError('messages show takes one message id: messages show MESSAGE_ID --site SITE');
  const { message, attempts } = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const found = await getMessage(db, site, messageId);
    if (!found) throw new DomainError('not-found', `no message ${messageId} in this site`);
    const tries = await reprocessAttempts(db, site, found.id);
    await recordOperatorRead(db, site.siteId, { interaction: 'view', resourceType: 'Message', resourceIds: [found.id], patientIds: [] });
    return { message: found, attempts: tries };
  });
  const document = { ...row(message), raw: message.raw ? displayRaw(message.raw) : null, raw_size: message.raw?.length ?? 0, body_purged_at: message.bodyPurgedAt, ack_text: displayRaw(Buffer.from(message.ackText, 'utf8')), attempts: attempts.map(row) };
  print(document, json, () => {
    const { raw, ack_text: ackText, attempts: tries, ...summary } = document;
    return `${formatRecord(summary)}\n\n${raw}\n\nacknowledgement sent:\n${ackText}` +
      (tries.length ? `\n\nreprocessed attempts:\n${formatTable(tries, ['id', 'received_at', 'ack', 'outcome'])}` : '');
  });
}
