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
  mshFields[9] = components('ACK', trigger, 'ACK');
  mshFields[10] = newControlId();
  mshFields[11] = fieldOf(msh, 11).length > 0 && valueOf(msh, 11) !== '' ? fieldOf(msh, 11) : 'P';
  mshFields[12] = fieldOf(msh, 12).length > 0 && valueOf(msh, 12) !== '' ? fieldOf(msh, 12) : '2.5.1';
  if (charsetField && valueOf(msh, 18) !== '') mshFields[18] = [charsetField];
  const segments = [encodeSegment('MSH', mshFields, d)];
  segments.push(encodeSegment('MSA', [undefined, input.code, valueOf(msh, 10), truncate(input.text, 80)], d));
  for (const problem of input.problems) segments.push(errSegment(problem, d));
  return segments.join('\r');
}

function errSegment(problem: Problem, d: Delimiters): string {
  const l = problem.location;
  const location: FieldValue | undefined = l
    ? components(l.segment, String(l.sequence ?? 1), optional(l.field), optional(l.repetition ?? (l.field !== undefined ? 1 : undefined)), optional(l.component), optional(l.subcomponent))
    : undefined;
  const fields: (FieldValue | undefined)[] = [];
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
