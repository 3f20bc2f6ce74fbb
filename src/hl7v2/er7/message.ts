/**
 * The parsed form of one ER7 message: segments of fields of repetitions of components of
 * subcomponents (HL7 v2.5.1 section 2.5), every leaf already unescaped. Positions are 1-based as
 * in HL7 notation (PID-3.4.2 is field 3, component 4, subcomponent 2).
 */
import type { SupportedCharset } from './charset.ts';
import type { Delimiters } from './delimiters.ts';

export type Component = string[];
export type Repetition = Component[];
export type Field = Repetition[];

export interface Segment {
  /** Segment id, e.g. PID. */
  name: string;
  /** 1-based position of the segment in the message (ERR-2.2 counts per segment id, see below). */
  position: number;
  /** Occurrence of this segment id so far (1 for the first PID), as ERR-2.2 uses it. */
  sequence: number;
  /** fields[n] is field n; fields[0] is unused. For MSH, fields[1] is MSH-1 and fields[2] MSH-2. */
  fields: Field[];
  /** The segment's text as received (decoded to characters, not unescaped). */
  raw: string;
}

export interface Hl7Message {
  delimiters: Delimiters;
  charset: SupportedCharset;
  segments: Segment[];
}

/** HL7 "" (explicit null): the sender asks the receiver to delete the value (section 2.5.3). */
export const hl7Null = '""';

export function fieldOf(segment: Segment | undefined, field: number): Field {
  return segment?.fields[field] ?? [];
}

/** One leaf, '' when absent. */
export function valueOf(segment: Segment | undefined, field: number, component = 1, subcomponent = 1, repetition = 1): string {
  return fieldOf(segment, field)[repetition - 1]?.[component - 1]?.[subcomponent - 1] ?? '';
}

/** Component of one repetition, '' when absent. */
export function componentOf(repetition: Repetition | undefined, component: number, subcomponent = 1): string {
  return repetition?.[component - 1]?.[subcomponent - 1] ?? '';
}

/** True when a repetition holds no text at all. */
export function isEmptyRepetition(repetition: Repetition | undefined): boolean {
  return !repetition || repetition.every((component) => component.every((sub) => sub === ''));
}

export function segmentsNamed(message: Hl7Message, name: string): Segment[] {
  return message.segments.filter((segment) => segment.name === name);
}

export function firstSegment(message: Hl7Message, name: string): Segment | undefined {
  return message.segments.find((segment) => segment.name === name);
}

/** A field's ER7 text with components joined by the component separator (for logging, keys). */
export function fieldText(segment: Segment | undefined, field: number, delimiters: Delimiters): string {
  const repetition = fieldOf(segment, field)[0];
  if (!repetition) return '';
  return repetition
    .map((component) => component.join(delimiters.subcomponent))
    .join(delimiters.component)
    .replace(new RegExp(`[${escapeForClass(delimiters.component + delimiters.subcomponent)}]+$`), '');
}

function escapeForClass(chars: string): string {
  return chars.replace(/[\\\]^-]/g, '\\$&');
}
