/**
 * What the MLLP listener records when it refuses a connection's address or a message's sender
 * (src/domain/refused-traffic): the refusal, bounded per address and minute, and, when the
 * address belongs to one site, the refused message itself in that site's log (outcome refused).
 */
import { logRefusedMessage } from '../../domain/messages/refused-message.ts';
import { recordRefused } from '../../domain/refused-traffic/recorder.ts';
import type { Database } from '../../storage/database.ts';
import { messageTypeText, type MessageHeader } from '../er7/header.ts';
import { firstSegment, valueOf, type Hl7Message } from '../er7/message.ts';

export function recordRefusedAddress(db: Database, remoteAddress: string): void {
  recordRefused(db, { surface: 'mllp', kind: 'mllp-address-not-admitted', remoteAddress, reason: 'no integration client admits this address' });
}

export function recordRefusedSender(
  db: Database,
  refusal: { reason: string; siteId?: string },
  remoteAddress: string,
  received: { raw: Uint8Array; message: Hl7Message; header: MessageHeader; ackText: string },
): void {
  const { header } = received;
  const written = recordRefused(db, {
    siteId: refusal.siteId ?? null,
    surface: 'mllp',
    kind: 'mllp-sender-not-authorized',
    remoteAddress,
    reason: refusal.reason,
    details: { sending_application: header.sendingApplication, sending_facility: header.sendingFacility, control_id: header.controlId, message_type: messageTypeText(header) },
  });
  if (!written || !refusal.siteId) return;
  logRefusedMessage(db, refusal.siteId, {
    raw: received.raw,
    sendingApplication: header.sendingApplication,
    sendingFacility: header.sendingFacility,
    controlId: header.controlId,
    messageType: messageTypeText(header),
    patientIdentifier: valueOf(firstSegment(received.message, 'PID'), 3),
    ackText: received.ackText,
    reason: refusal.reason,
    remoteAddress,
  });
}
