/** The JSON answer of POST /v2/ingest, for messages and for transport errors alike. */
import type { HttpErrorInfo, RenderedError } from '../../platform/http/surface.ts';
import type { IntakeOutcome, ProblemView } from '../intake/intake.ts';

export interface IngestAnswer {
  success: boolean;
  message_type: string | null;
  control_id: string | null;
  ack_code: 'AA' | 'AE' | 'AR' | null;
  /** The rendered ACK (ER7, segments separated by CR); null when the body could not be read at all. */
  ack: string | null;
  duplicate: boolean;
  errors: ProblemView[];
  warnings: ProblemView[];
}

/** A batch's answer: the batch of ACKs, and each message's own answer in `messages`. */
export interface BatchIngestAnswer extends IngestAnswer {
  messages: IngestAnswer[];
}

/** 200 AA, 422 AE, 400 not HL7 or refused for its kind (AR), 503 retry later. */
export function statusFor(outcome: IntakeOutcome): number {
  if (outcome.retry) return 503;
  if (!outcome.recognised) return 400;
  if (outcome.ackCode === 'AA') return 200;
  if (outcome.ackCode === 'AR') return 400;
  return 422;
}

export function answerFor(outcome: IntakeOutcome): IngestAnswer {
  return {
    success: outcome.ackCode === 'AA',
    message_type: outcome.messageType || null,
    control_id: outcome.controlId || null,
    ack_code: outcome.ackCode,
    ack: outcome.ack,
    duplicate: outcome.duplicate,
    errors: outcome.errors,
    warnings: outcome.warnings,
  };
}

/** Errors raised before the message is read (401, 413, 415, 503, 500) in the same JSON shape. */
export function renderHl7v2Error(error: HttpErrorInfo): RenderedError {
  const body: IngestAnswer & { request_id?: string } = {
    success: false,
    message_type: null,
    control_id: null,
    ack_code: null,
    ack: null,
    duplicate: false,
    errors: [{ severity: 'error', code: 0, text: error.code, message: error.message }],
    warnings: [],
    ...(error.statusCode >= 500 ? { request_id: error.requestId } : {}),
  };
  return { contentType: 'application/json; charset=utf-8', body };
}

/** 200 when every message is AA, 503 when one is to be sent again, else 422 (see `messages`). */
export function batchStatusFor(outcomes: IntakeOutcome[], retry: boolean): number {
  if (retry) return 503;
  return outcomes.every((outcome) => outcome.ackCode === 'AA') ? 200 : 422;
}

/**
 * The top level speaks for the whole batch: `ack_code` is the worst of its messages' (AR, then
 * AE), `errors` and `warnings` are theirs, each message's prefixed with its control id, and the
 * batch's own notes (counts that do not match) are warnings.
 */
export function batchAnswerFor(outcomes: IntakeOutcome[], ack: string, notes: string[], controlId: string | null): BatchIngestAnswer {
  const codes = outcomes.map((outcome) => outcome.ackCode);
  const prefixed = (outcome: IntakeOutcome, problems: ProblemView[]) => problems.map((p) => ({ ...p, message: `message ${outcome.controlId || '(no control id)'}: ${p.message}` }));
  return {
    success: codes.every((code) => code === 'AA'),
    message_type: null,
    control_id: controlId,
    ack_code: codes.includes('AR') ? 'AR' : codes.includes('AE') ? 'AE' : 'AA',
    ack,
    duplicate: outcomes.length > 0 && outcomes.every((outcome) => outcome.duplicate),
    errors: outcomes.flatMap((outcome) => prefixed(outcome, outcome.errors)),
    warnings: [...notes.map((message): ProblemView => ({ severity: 'warning', code: 100, text: 'Segment sequence error', message })), ...outcomes.flatMap((outcome) => prefixed(outcome, outcome.warnings))],
    messages: outcomes.map(answerFor),
  };
}
