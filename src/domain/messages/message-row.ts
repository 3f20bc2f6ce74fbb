/** The message log's row as read, and its domain shape (shared by reads and search). */
import type { MessageOutcome, MessageProblem, MessageProtocol, MessageTransport } from './message-log.ts';

export interface LoggedMessageSummary {
  id: string;
  protocol: MessageProtocol;
  transport: MessageTransport;
  sendingApplication: string;
  sendingFacility: string;
  controlId: string | null;
  messageType: string;
  outcome: MessageOutcome;
  ackCode: string;
  problems: MessageProblem[];
  remoteAddress: string | null;
  receivedAt: string;
  patientIdentifier: string | null;
  /** On a reprocessed attempt: the failed message it re-ran. */
  reprocessOf: string | null;
  /** On a failed message: its accepted reprocessed attempt. */
  reprocessedAs: string | null;
}

export const summaryColumns =
  'id, seq, protocol, transport, sending_application, sending_facility, control_id, message_type, outcome, ack_code, problems, remote_address, received_at, patient_identifier, reprocess_of, reprocessed_as';

export interface Row {
  id: string;
  seq: string;
  protocol: MessageProtocol;
  transport: MessageTransport;
  sending_application: string;
  sending_facility: string;
  control_id: string | null;
  message_type: string;
  outcome: MessageOutcome;
  ack_code: string;
  problems: MessageProblem[];
  remote_address: string | null;
  received_at: Date;
  patient_identifier: string | null;
  reprocess_of: string | null;
  reprocessed_as: string | null;
  ack_text?: string;
  raw?: Buffer | null;
  body_purged_at?: Date | null;
}

export function toSummary(row: Row): LoggedMessageSummary {
  return {
    id: row.id,
    protocol: row.protocol,
    transport: row.transport,
    sendingApplication: row.sending_application,
    sendingFacility: row.sending_facility,
    controlId: row.control_id,
    messageType: row.message_type,
    outcome: row.outcome,
    ackCode: row.ack_code,
    problems: row.problems,
    remoteAddress: row.remote_address,
    receivedAt: row.received_at.toISOString(),
    patientIdentifier: row.patient_identifier,
    reprocessOf: row.reprocess_of,
    reprocessedAs: row.reprocessed_as,
  };
}

