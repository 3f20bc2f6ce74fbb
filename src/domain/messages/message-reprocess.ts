/**
 * Reprocessing: a site administrator re-runs a failed message (AE or AR) after fixing its cause
 * (the integration client's charset or time zone, a missing registration, the site's policy).
 *
 * The attempt goes through the protocol's own intake, exactly as a delivery would, and is logged
 * as a message of its own beside the original (reprocess_of), with its own acknowledgement. The
 * rules that keep a message from being applied twice:
 * - a message that was accepted is never reprocessed (409);
 * - a failed message has at most one accepted attempt: the attempt's log entry marks the original
 *   (reprocessed_as) in the transaction that applies it, and a racing second attempt rolls back;
 * - after that, a sender re-sending the control id gets the accepted attempt's acknowledgement.
 * Who reprocessed what is in the audit log.
 *
 * The intake belongs to the protocol's surface, which the admin surface may not import: the
 * composition root hands it over as a MessageRerun (Services.messageRerun).
 */
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { findLoggedMessage, getMessage, type LoggedMessage } from './message-log.ts';
import { summaryColumns, toSummary, type LoggedMessageSummary, type Row } from './message-row.ts';

/** Runs a logged message through its protocol's intake again, logging the attempt with reprocessOf. */
export type MessageRerun = (site: SiteContext, message: LoggedMessage) => Promise<void>;

export interface Reprocessed {
  original: LoggedMessageSummary;
  attempt: LoggedMessageSummary;
}

export async function reprocessMessage(db: Queryable, site: SiteContext, messageId: string, rerun: MessageRerun): Promise<Reprocessed> {
  const original = await getMessage(db, site, messageId);
  if (!original) throw new DomainError('not-found', 'no such message in this site');
  if (original.reprocessOf) throw new DomainError('conflict', `this is a reprocessed attempt; reprocess the original message ${original.reprocessOf}`);
  if (original.outcome === 'processed') throw new DomainError('conflict', 'this message was accepted; only a failed message (AE or AR) can be reprocessed');
  if (original.reprocessedAs) throw new DomainError('conflict', `this message was already reprocessed and accepted (attempt ${original.reprocessedAs})`);
  if (original.protocol !== 'hl7v2') throw new DomainError('unsupported', 'only HL7 v2 messages can be reprocessed');
  if (original.outcome === 'refused' && original.controlId !== null) {
    // The sender may have re-sent it after the fix: then that copy stands for the control id.
    const delivered = await findLoggedMessage(db, site, { protocol: original.protocol, sendingApplication: original.sendingApplication, sendingFacility: original.sendingFacility, controlId: original.controlId });
    if (delivered) throw new DomainError('conflict', `the sender has since delivered this control id again (message ${delivered.id}); it is not applied twice`);
  }
  await rerun(site, original);
  const attempt = await latestAttempt(db, site, original.id);
  // Nothing logged: the attempt met a transient failure (database) before it could be recorded.
  if (!attempt) throw new DomainError('conflict', 'the attempt could not be recorded; try again');
  await recordAudit(db, {
    siteId: site.siteId,
    actor: site.actor,
    action: 'message.reprocess',
    targetType: 'message',
    targetId: original.id,
    details: { attempt_id: attempt.id, ack_code: attempt.ackCode, control_id: original.controlId },
  });
  const current = await getMessage(db, site, original.id);
  return { original: current ?? original, attempt };
}

/** The attempts made for a failed message, oldest first. */
export async function reprocessAttempts(db: Queryable, site: SiteContext, messageId: string): Promise<LoggedMessageSummary[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${summaryColumns} FROM inbound_message WHERE site_id = $1 AND reprocess_of = $2 ORDER BY seq`,
    [site.siteId, messageId],
  );
  return rows.map(toSummary);
}

async function latestAttempt(db: Queryable, site: SiteContext, messageId: string): Promise<LoggedMessageSummary | undefined> {
  const attempts = await reprocessAttempts(db, site, messageId);
  // An accepted attempt (one at most) wins over a later failed one raced in beside it.
  return attempts.find((attempt) => attempt.outcome === 'processed') ?? attempts[attempts.length - 1];
}
