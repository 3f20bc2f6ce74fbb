/**
 * An MLLP message refused because its MSH-3/MSH-4 matched no integration client, kept in the log
 * of the site whose clients admit the sender's address (outcome `refused`), so that the site's
 * operators see what was refused and can reprocess it once the client is fixed.
 *
 * Bounded like all refused traffic: the caller logs a message only when the refused-traffic
 * recorder wrote a row for it (the first per site, address and minute), so a sender repeating
 * a wrong MSH-4 cannot fill the log. Refused messages take no part in idempotency (migration
 * 0740): a re-send after the fix is processed, not answered with the refusal.
 */
import { findSiteById, siteContextFor } from '../sites/sites.ts';
import type { Database } from '../../storage/database.ts';
import { recordMessage } from './message-log.ts';

export interface RefusedMessage {
  raw: Uint8Array;
  sendingApplication: string;
  sendingFacility: string;
  controlId: string;
  messageType: string;
  patientIdentifier: string;
  ackText: string;
  reason: string;
  remoteAddress: string;
}

/** Logs in the background; a failure loses only this record (the refusal was logged and counted). */
export function logRefusedMessage(db: Database, siteId: string, message: RefusedMessage): void {
  void (async () => {
    const site = await findSiteById(db, siteId);
    if (!site) return;
    // No integration client admitted the sender: it acts as an unknown party at its address.
    const context = siteContextFor(site, { kind: 'anonymous', remoteAddress: message.remoteAddress });
    await db.transaction((tx) =>
      recordMessage(tx, context, {
        protocol: 'hl7v2',
        transport: 'mllp',
        sendingApplication: message.sendingApplication,
        sendingFacility: message.sendingFacility,
        controlId: message.controlId,
        messageType: message.messageType,
        outcome: 'refused',
        ackCode: 'AR',
        problems: [{ severity: 'error', code: '204', location: 'MSH-3', message: message.reason }],
        ackText: message.ackText,
        raw: message.raw,
        remoteAddress: message.remoteAddress,
        ...(message.patientIdentifier ? { patientIdentifier: message.patientIdentifier } : {}),
      }),
    );
  })().catch(() => undefined);
}
