import { randomUUID } from 'node:crypto';
import type { MessageProblem } from '../../domain/messages/message-log.ts';
import type { AcknowledgementDetail, AcknowledgementType } from '../ack/acknowledgement.ts';
import { buildMcciAcknowledgement } from '../ack/mcci-builder.ts';
import type { Envelope } from '../message/envelope.ts';

/** What the HTTP route sends back: an MCCI_IN000002UV01 and its status. */
export interface IntakeAnswer {
  statusCode: number;
  typeCode: AcknowledgementType;
  ackXml: string;
  details: AcknowledgementDetail[];
  /** True when this is the stored acknowledgement of a message already received. */
  duplicate: boolean;
  /** Set when the message came in a SOAP 1.2 envelope: answer in one, related to its wsa:MessageID. */
  soap?: { relatesTo?: string };
}

/**
 * HTTP status of an acknowledgement (issue 6): 200 AA, 422 AE, 400 for a body that is not an HL7
 * v3 message or asks for an interaction this service does not offer, 413 oversized, 503 when
 * the sender must retry.
 */
export type AnswerKind = 'accepted' | 'content-error' | 'not-a-message' | 'too-large' | 'unsupported' | 'retry-later' | 'internal';

const statusOf: Record<AnswerKind, number> = {
  accepted: 200,
  'content-error': 422,
  'not-a-message': 400,
  'too-large': 413,
  unsupported: 400,
  'retry-later': 503,
  internal: 500,
};

const typeOf: Record<AnswerKind, AcknowledgementType> = {
  accepted: 'AA',
  'content-error': 'AE',
  'not-a-message': 'AE',
  'too-large': 'AE',
  // AR: refused for a reason other than the message content (AcknowledgementType, 2.16.840.1.113883.5.18).
  unsupported: 'AR',
  'retry-later': 'AR',
  internal: 'AR',
};

export function answer(kind: AnswerKind, envelope: Envelope | undefined, details: AcknowledgementDetail[]): IntakeAnswer {
  const typeCode = typeOf[kind];
  const ackXml = buildMcciAcknowledgement({
    id: { root: randomUUID() },
    creationTime: new Date(),
    processingCode: envelope?.processingCode ?? 'P',
    sender: envelope?.receiver,
    receiver: envelope?.sender,
    typeCode,
    targetMessage: envelope?.id,
    details,
  });
  return { statusCode: statusOf[kind], typeCode, ackXml, details, duplicate: false };
}

/**
 * The HTTP status a stored acknowledgement had when it was first sent. Only messages with a
 * readable id are stored under a key, so an AE there was always a content error (422) and an AR
 * an unsupported interaction (400).
 */
export function statusOfStoredAck(ackCode: string): number {
  if (ackCode === 'AA') return 200;
  if (ackCode === 'AE') return 422;
  return 400;
}

/** Acknowledgement details in the message log's protocol-neutral form. */
export function logProblems(details: AcknowledgementDetail[]): MessageProblem[] {
  return details.map((detail) => ({
    severity: detail.typeCode === 'E' ? 'error' : detail.typeCode === 'W' ? 'warning' : 'information',
    code: detail.code,
    message: detail.text,
    ...(detail.location ? { location: detail.location } : {}),
  }));
}
