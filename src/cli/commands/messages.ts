import { listMessages } from '../../domain/messages/message-log.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import type { CommandContext } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function messagesCommand({ options, json }: CommandContext): Promise<void> {
  const limit = Number(options.optional('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new UsageError('--limit must be 1 to 500');
  const page = await withDatabase(async (db) => {
    const site = siteContextFor(await resolveSite(db, options.required('site')), { kind: 'operator' });
    const before = options.optional('before');
    return listMessages(db, site, { limit, ...(before ? { before } : {}) });
  });
  const rows = page.messages.map((message) => ({
    id: message.id,
    received_at: message.receivedAt,
    protocol: message.protocol,
    transport: message.transport,
    type: message.messageType,
    control_id: message.controlId,
    sender: [message.sendingApplication, message.sendingFacility].filter(Boolean).join('@'),
    ack: message.ackCode,
    outcome: message.outcome,
    problems: message.problems.map((problem) => `${problem.severity}: ${problem.message}`),
  }));
  print({ messages: rows, ...(page.nextBefore ? { next_before: page.nextBefore } : {}) }, json, () =>
    formatTable(rows, ['received_at', 'protocol', 'transport', 'type', 'control_id', 'sender', 'ack', 'problems']) + (page.nextBefore ? `\n(older: --before ${page.nextBefore})` : ''),
  );
}
