/**
 * Original-mode acknowledgement, HL7 v2.5.1 section 2.9.2 and message structure ACK (2.14.1):
 * MSH with sender and receiver swapped, MSH-9 ACK^<event>^ACK, a new MSH-10, MSH-11/12 copied;
 * MSA-1 AA/AE/AR, MSA-2 the acknowledged MSH-10, MSA-3 a short text; one ERR per problem.
 */
import { randomBytes } from 'node:crypto';
import { defaultDelimiters, type Delimiters } from '../er7/delimiters.ts';
import { components, encodeSegment, type FieldValue } from '../er7/encode.ts';
import { fieldOf, firstSegment, valueOf, type Field, type Hl7Message } from '../er7/message.ts';
import { errorCodeText, type Problem } from '../problems.ts';

export type AckCode = 'AA' | 'AE' | 'AR';

export interface AckInput {
  /** The message being answered; absent when not even its MSH could be read. */
  message?: Hl7Message;
  code: AckCode;
  text: string;
  problems: Problem[];
  now?: Date;
  /** Application name the gateway answers as when the message names no receiver. */
  gatewayApplication?: string;
}

/** Segments joined by CR, no trailing CR (MLLP adds the frame; HTTP returns it as is). */
export function buildAck(input: AckInput): string {
  const d: Delimiters = input.message?.delimiters ?? defaultDelimiters;
  const msh = input.message ? firstSegment(input.message, 'MSH') : undefined;
  const swapped = (field: number): Field => fieldOf(msh, field);
  const receivingApplication = swapped(5);
  const trigger = valueOf(msh, 9, 2);
  const charsetField = fieldOf(msh, 18)[0];
  const mshFields: (FieldValue | undefined)[] = [];
  mshFields[3] = receivingApplication.length > 0 && valueOf(msh, 5) !== '' ? receivingApplication : input.gatewayApplication ?? 'CLINICAL-GATEWAY';
  mshFields[4] = swapped(6);
  mshFields[5] = swapped(3);
  mshFields[6] = swapped(4);
  mshFields[7] = hl7Timestamp(input.now ?? new Date());
  const version = valueOf(msh, 12).trim();
  mshFields[9] = messageType(trigger, version);
  mshFields[10] = newControlId();
  mshFields[11] = fieldOf(msh, 11).length > 0 && valueOf(msh, 11) !== '' ? fieldOf(msh, 11) : 'P';
  mshFields[12] = fieldOf(msh, 12).length > 0 && valueOf(msh, 12) !== '' ? fieldOf(msh, 12) : '2.5.1';
  if (charsetField && valueOf(msh, 18) !== '') mshFields[18] = [charsetField];
  const segments = [encodeSegment('MSH', mshFields, d)];
  segments.push(encodeSegment('MSA', [undefined, input.code, valueOf(msh, 10), truncate(input.text, 80)], d));
  for (const problem of input.problems) segments.push(errSegment(problem, d, before(version, 5, 0)));
  return segments.join('\r');
}

/**
 * MSH-9: ACK^event^ACK. The third component (message structure) came with v2.3.1, and before it
 * an ACK answered in the sender's own form: ACK^event, or ACK alone when MSH-9 carried no event
 * (v2.1 and v2.2 senders, whose event is in EVN-1).
 */
function messageType(trigger: string, version: string): FieldValue {
  if (!before(version, 3, 1)) return components('ACK', trigger, 'ACK');
  return trigger ? components('ACK', trigger) : 'ACK';
}

/** True when `version` is a 2.x older than 2.minor.patch; an unreadable version is taken as current. */
function before(version: string, minor: number, patch: number): boolean {
  const match = /^2\.(\d+)(?:\.(\d+))?/.exec(version);
  if (!match) return false;
  const [m, p] = [Number(match[1]), Number(match[2] ?? 0)];
  return m < minor || (m === minor && p < patch);
}

/**
 * ERR-2 (location), ERR-3 (code), ERR-4 (severity) and ERR-8 (text) from v2.5 on; senders of
 * earlier versions know only ERR-1 (segment ^ sequence ^ field ^ code, HL7 v2.4 section 2.16.5.1),
 * so it is filled for them as well.
 */
function errSegment(problem: Problem, d: Delimiters, withErr1: boolean): string {
  const l = problem.location;
  const location: FieldValue | undefined = l
    ? components(l.segment, String(l.sequence ?? 1), optional(l.field), optional(l.repetition ?? (l.field !== undefined ? 1 : undefined)), optional(l.component), optional(l.subcomponent))
    : undefined;
  const fields: (FieldValue | undefined)[] = [];
  if (withErr1) fields[1] = [[[l?.segment ?? ''], [l ? String(l.sequence ?? 1) : ''], [optional(l?.field)], [String(problem.code), errorCodeText[problem.code], 'HL70357']]];
  fields[2] = location;
  fields[3] = components(String(problem.code), errorCodeText[problem.code], 'HL70357');
  fields[4] = problem.severity;
  fields[8] = truncate(problem.message, 250);
  return encodeSegment('ERR', fields, d);
}

function optional(value: number | undefined): string {
  return value === undefined ? '' : String(value);
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** DTM to the second with offset, section 2.A.22: YYYYMMDDHHMMSS+ZZZZ (always UTC here). */
export function hl7Timestamp(date: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(date.getUTCFullYear(), 4)}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}+0000`;
}

/** Unique within 20 characters (the ST length of MSH-10 in v2.5.1). */
export function newControlId(): string {
  return `CG${Date.now().toString(36).toUpperCase()}${randomBytes(4).toString('hex').toUpperCase()}`;
}
