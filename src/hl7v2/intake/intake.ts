/**
 * The one intake function for HL7 v2 over HTTP and MLLP: parse, check, map, apply and log in one
 * transaction, and acknowledge only after the commit (DESIGN.md section 2). The transport adapter
 * passes the resolved site and the message's origin; the answer is the ACK plus its parts for the
 * HTTP JSON body.
 */
import { DuplicateMessageError, findLoggedMessage, recordMessage, type MessageOutcome, type MessageProblem, type MessageTransport, type NewMessage } from '../../domain/messages/message-log.ts';
import { recordNewPatientMessage } from '../../domain/patients/new-patient-message.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Database, NamedStatement } from '../../storage/database.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';
import { groupedTransactions } from '../../storage/grouped-transactions.ts';
import { isDomainError } from '../../domain/errors.ts';
import { buildAck, type AckCode } from '../ack/build-ack.ts';
import { answerForFailure } from '../ack/error-mapping.ts';
import type { SupportedCharset } from '../er7/charset.ts';
import { messageTypeText, readHeader, type MessageHeader } from '../er7/header.ts';
import { firstSegment, valueOf } from '../er7/message.ts';
import { parseEr7, type ParseResult } from '../er7/parse.ts';
import { describeLocation, errorCodeText, type Problem } from '../problems.ts';
import { applyPlan } from './apply.ts';
import { noteSeenPatient, seenPatient } from './seen-patients.ts';
import { planMessage, type Plan } from './plan.ts';

/** What the intake logs through (pino's and Fastify's loggers both fit). */
export interface IntakeLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const defaultMaxMessageBytes = 1024 * 1024;

export interface MessageOrigin {
  transport: MessageTransport;
  remoteAddress?: string;
  /** The integration client (MLLP) or API key (HTTP) the message came through. */
  credentialId?: string;
  /** An operator re-running a failed message: its id in the message log. */
  reprocessOf?: string;
}

export interface IntakeInput {
  raw: Uint8Array;
  site: SiteContext;
  /** Charset for messages whose MSH-18 is empty. */
  defaultCharset: SupportedCharset;
  /**
   * The integration client's IANA time zone for times without a UTC offset, when it has one;
   * otherwise the site's (SiteContext.timeZone) applies.
   */
  clientTimeZone?: string | null;
  origin: MessageOrigin;
  maxBytes?: number;
  /** parseEr7 of `raw` with this defaultCharset and maxBytes, when the caller has it already. */
  parsed?: ParseResult;
  /** Set while new data is refused (free disk space below the floor): answered AR, nothing stored. */
  refusal?: Error;
}

export interface ProblemView {
  severity: 'error' | 'warning' | 'information';
  code: number;
  text: string;
  location?: string;
  message: string;
}

export interface IntakeOutcome {
  ackCode: AckCode;
  /** The ACK in ER7, segments separated by CR. */
  ack: string;
  /** The charset the ACK is to be written in on a byte stream (the message's own). */
  ackCharset: SupportedCharset;
  /** False when the input was not an HL7 v2 message at all. */
  recognised: boolean;
  messageType: string;
  controlId: string;
  errors: ProblemView[];
  warnings: ProblemView[];
  /** True when this control id had been processed before and the original ACK was returned. */
  duplicate: boolean;
  /** True when the failure is transient and the sender should send the message again. */
  retry: boolean;
}

export async function ingestHl7v2(db: Database, input: IntakeInput, logger?: IntakeLogger): Promise<IntakeOutcome> {
  const parsed = input.parsed ?? parseEr7(input.raw, { defaultCharset: input.defaultCharset, maxBytes: input.maxBytes ?? defaultMaxMessageBytes });
  const message = parsed.message;
  const header = message ? readHeader(message) : undefined;
  const patientIdentifier = message ? valueOf(firstSegment(message, 'PID'), 3) : '';
  const ackCharset = message?.charset ?? 'UNICODE UTF-8';
  const logExtras = { ...(patientIdentifier ? { patientIdentifier } : {}), ...(input.origin.reprocessOf ? { reprocessOf: input.origin.reprocessOf } : {}) };
  const base = { recognised: message !== undefined, messageType: header ? messageTypeText(header) : '', controlId: header?.controlId ?? '', ackCharset };
  const logEntry = (code: AckCode, problems: Problem[], ack: string): NewMessage => ({
    protocol: 'hl7v2',
    transport: input.origin.transport,
    ...(header ? senderKey(header) : { sendingApplication: '', sendingFacility: '' }),
    messageType: base.messageType,
    outcome: outcomeOf(code),
    ackCode: code,
    problems: problems.map(toLogProblem),
    ackText: ack,
    raw: input.raw,
    ...(input.origin.remoteAddress ? { remoteAddress: input.origin.remoteAddress } : {}),
    ...logExtras,
  });
  // A re-sent control id is not looked up first: re-sends are rare, and the message log's unique
  // key (recordMessage) refuses the second copy at the end of the transaction, which then rolls
  // back whatever the copy changed; the stored answer is returned (earlierAnswer). One statement
  // fewer for every message that is not a re-send.
  try {
    if (input.refusal) throw input.refusal;
    let problems = parsed.problems;
    let plan: Plan | undefined;
    let code: AckCode = 'AE';
    if (message && !problems.some((p) => p.severity === 'E')) {
      const planned = planMessage(message, { timeZone: input.clientTimeZone ?? input.site.timeZone });
      problems = [...problems, ...planned.problems];
      plan = planned.plan;
      code = planned.rejected ? 'AR' : plan ? 'AA' : 'AE';
    }
    const identifier = plan?.kind === 'demographics' ? (plan.patient.identifier?.[0]?.value?.trim() ?? '') : '';
    if (plan?.kind === 'demographics' && code === 'AA' && header && input.origin.reprocessOf === undefined && mayBeNewPatient(header, input.site, identifier)) {
      // A patient the site does not know yet (the usual admission or registration) costs one
      // round trip: patient, visit and log entry in one call that commits on its own. A known
      // patient, or anything unusual, takes the ordinary transaction below.
      const ack = buildAck({ message, code, text: ackText(code, problems), problems });
      const fast = await recordNewPatientMessage(db, input.site, { patient: plan.patient, ...(plan.visit ? { visit: plan.visit } : {}), message: logEntry(code, problems, ack) });
      noteSeenPatient(input.site.siteId, identifier);
      if (fast.outcome === 'created') return { ...base, ackCode: code, ack, ...split(problems), duplicate: false, retry: false };
      if (fast.outcome === 'duplicate') throw new DuplicateMessageError('this sender already delivered a message with this control id');
    }
    // Committed together with the messages of other connections that arrive meanwhile, and
    // answered only after that commit; a message that fails in a group is run again alone
    // (src/storage/grouped-transactions.ts), so it fails or succeeds exactly as it would alone.
    const committed = await groupedTransactions(db).run(async (tx) => {
      let all = problems;
      let deferred: NamedStatement[] = [];
      if (plan) {
        const summary = await applyPlan(tx, input.site, plan);
        all = [...all, ...summary.problems];
        deferred = summary.deferred;
      }
      const ack = buildAck({ message, code, text: ackText(code, all), problems: all });
      await recordMessage(tx, input.site, logEntry(code, all, ack), deferred);
      return { ack, problems: all };
    });
    return { ...base, ackCode: code, ack: committed.ack, ...split(committed.problems), duplicate: false, retry: false };
  } catch (failure) {
    if (failure instanceof DuplicateMessageError && header) {
      const earlier = await earlierAnswer(db, input.site, header);
      if (earlier) return { ...base, ...earlier };
    }
    const answer = answerForFailure(failure);
    // A re-send whose second application fails where the first did not (a bug, or a state the
    // first never met) gets the first answer, not an AR that would have it re-sent forever.
    if (answer.retry && header && !isTransientDatabaseError(failure)) {
      const earlier = await earlierAnswer(db, input.site, header);
      if (earlier) return { ...base, ...earlier };
    }
    // A refusal for disk space is logged by the disk-space guard on entering and leaving, not per message.
    const refused = failure === input.refusal;
    if (!refused && isTransientDatabaseError(failure)) {
      logger?.warn({ site: input.site.siteId, controlId: base.controlId }, 'HL7 v2 message answered AR: database unavailable');
    } else if (!refused && !isDomainError(failure)) {
      logger?.error({ err: failure, site: input.site.siteId, controlId: base.controlId }, 'HL7 v2 message could not be applied');
    }
    const ack = buildAck({ message, code: answer.code, text: answer.text, problems: answer.problems });
    if (!answer.retry) {
      // Refused by the domain (AE): nothing clinical was stored, but the log keeps the message and
      // its answer, so that a re-send gets the same answer. A re-send of a message first answered
      // otherwise (its content may fail now, when it did not then) gets that first answer.
      const logged = await db
        .transaction((tx) =>
          recordMessage(tx, input.site, logEntry(answer.code, answer.problems, ack)),
        )
        .then(
          () => true,
          (error: unknown) => !(error instanceof DuplicateMessageError),
        );
      const earlier = logged || !header ? undefined : await earlierAnswer(db, input.site, header);
      if (earlier) return { ...base, ...earlier };
    }
    return { ...base, ackCode: answer.code, ack, ...split(answer.problems), duplicate: false, retry: answer.retry };
  }
}

/**
 * Worth trying the one-round-trip write of a new patient first: an event that may introduce a
 * patient (admit, register, pre-admit, add person, ...; not A08 or A31, which update one the
 * sender knows to exist), about an identifier this process has not seen as a patient yet. Where
 * the patient exists, the try is a wasted validation and round trip.
 */
function mayBeNewPatient(header: MessageHeader, site: SiteContext, identifier: string): boolean {
  if (header.triggerEvent === 'A08' || header.triggerEvent === 'A31' || identifier === '') return false;
  return !seenPatient(site.siteId, identifier);
}

/** The answer a copy of this message got when it was first processed, if one was logged. */
async function earlierAnswer(db: Database, site: SiteContext, header: MessageHeader): Promise<Omit<IntakeOutcome, 'recognised' | 'messageType' | 'controlId' | 'ackCharset'> | undefined> {
  const previous = await findLoggedMessage(db, site, { protocol: 'hl7v2', ...senderKey(header) }).catch(() => undefined);
  return previous ? { ...fromLog(previous.ackCode, previous.ackText, previous.problems), duplicate: true, retry: false } : undefined;
}

/** The idempotency key: MSH-3, MSH-4 and MSH-10 (DESIGN.md section 2). */
export function senderKey(header: MessageHeader): { sendingApplication: string; sendingFacility: string; controlId: string } {
  return { sendingApplication: header.sendingApplication, sendingFacility: header.sendingFacility, controlId: header.controlId };
}

function ackText(code: AckCode, problems: Problem[]): string {
  const errors = problems.filter((p) => p.severity === 'E');
  if (code === 'AA') return 'message accepted';
  if (errors.length === 1) return errors[0]!.message;
  return `${errors.length} problems; see ERR segments`;
}

function outcomeOf(code: AckCode): MessageOutcome {
  return code === 'AA' ? 'processed' : code === 'AE' ? 'error' : 'rejected';
}

function view(problem: Problem): ProblemView {
  const location = describeLocation(problem.location);
  return {
    severity: problem.severity === 'E' ? 'error' : problem.severity === 'W' ? 'warning' : 'information',
    code: problem.code,
    text: errorCodeText[problem.code],
    ...(location ? { location } : {}),
    message: problem.message,
  };
}

function split(problems: Problem[]): { errors: ProblemView[]; warnings: ProblemView[] } {
  const views = problems.map(view);
  return { errors: views.filter((v) => v.severity === 'error'), warnings: views.filter((v) => v.severity !== 'error') };
}

function toLogProblem(problem: Problem): MessageProblem {
  const v = view(problem);
  return { severity: v.severity, code: String(v.code), ...(v.location ? { location: v.location } : {}), message: v.message };
}

function fromLog(ackCode: string, ack: string, problems: MessageProblem[]): { ackCode: AckCode; ack: string; errors: ProblemView[]; warnings: ProblemView[] } {
  const views = problems.map((p) => ({
    severity: p.severity,
    code: Number(p.code),
    text: errorCodeText[Number(p.code) as keyof typeof errorCodeText] ?? '',
    ...(p.location ? { location: p.location } : {}),
    message: p.message,
  }));
  return { ackCode: ackCode as AckCode, ack, errors: views.filter((v) => v.severity === 'error'), warnings: views.filter((v) => v.severity !== 'error') };
}

