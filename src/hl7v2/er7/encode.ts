/** ER7 writer: the inverse of parse for fields built by the gateway (ACKs). */
import type { Delimiters } from './delimiters.ts';
import { encodingCharacters } from './delimiters.ts';
import { escapeText } from './escape.ts';
import type { Field } from './message.ts';

/** A field value for writing: a plain string (one leaf) or the full nested structure. */
export type FieldValue = string | Field;

export function encodeField(value: FieldValue | undefined, d: Delimiters): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return escapeText(value, d);
  return value
    .map((repetition) => repetition.map((component) => component.map((leaf) => escapeText(leaf, d)).join(d.subcomponent)).join(d.component))
    .join(d.repetition)
    .replace(trailingEmpty(d), '');
}

function trailingEmpty(d: Delimiters): RegExp {
  const chars = (d.component + d.subcomponent).replace(/[\\\]^-]/g, '\\$&');
  return new RegExp(`[${chars}]+$`);
}

/** A component list written as one repetition: ['ACK', 'A01', 'ACK'] -> ACK^A01^ACK. */
export function components(...values: string[]): Field {
  return [values.map((value) => [value])];
}

/** One segment; fields[0] is the segment id. For MSH, fields[1] and [2] are taken from d. */
export function encodeSegment(name: string, fields: (FieldValue | undefined)[], d: Delimiters): string {
  const parts = name === 'MSH' ? ['MSH', encodingCharacters(d), ...fields.slice(3).map((f) => encodeField(f, d))] : [name, ...fields.slice(1).map((f) => encodeField(f, d))];
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts.join(d.field);
}
