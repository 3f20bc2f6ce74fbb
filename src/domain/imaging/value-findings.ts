/**
 * How the index keeps the values an instance's header holds, and what it says when it cannot keep
 * one exactly. Two rules:
 * - An identifier (PatientID, AccessionNumber) is identity: it is kept in full, never shortened
 *   or altered, so two values never become one. One the index cannot hold as it is (control
 *   characters, more than identifierBound characters) refuses the instance.
 * - Any other attribute describes: whatever it holds, the instance is stored, and the value is
 *   indexed as best it can be (absent, characters replaced, or cut at the index's bound).
 * Every value the index holds otherwise than the dataset does, and every value over its VR's
 * length, is a finding: the instance is stored and the sender is answered with a warning
 * (PS3.4 B.2.3 and B.4.1.3, 0xB000 "coercion of data elements"), the dataset itself unchanged.
 */
import { DomainError } from '../errors.ts';

export interface ValueFinding {
  /** The attribute's keyword (PS3.6), such as PatientID. */
  attribute: string;
  problem: string;
}

/**
 * Longest identifier kept, in characters: four times LO's 64, and within what PostgreSQL's btree
 * indexes on identifiers accept (an index row holds at most about 2,700 bytes).
 */
export const identifierBound = 256;
/** Longest descriptive text the index keeps; the file keeps the whole value. */
export const descriptiveBound = 1024;

// C0 and C1 controls and DEL: no string VR of an indexed attribute allows them once escape
// sequences are read (PS3.5 6.1.2.3, table 6.2-1).
const controls = /[\u0000-\u001f\u007f-\u009f]/;
const controlsGlobal = /[\u0000-\u001f\u007f-\u009f]/g;

/** PS3.5 6.2: leading and trailing spaces of LO, SH and PN are padding; some writers pad with NUL. */
function withoutPadding(value: string): string {
  return value.replace(/[\0 ]+$/, '').replace(/^ +/, '');
}

/** An identifier exactly as sent (padding aside), null when empty; refuses what cannot be kept. */
export function readIdentifier(attribute: string, raw: string | undefined, vrMaxLength: number, findings: ValueFinding[]): string | null {
  if (raw === undefined || raw === null) return null;
  const value = withoutPadding(raw);
  if (value.length === 0) return null;
  if (controls.test(value)) {
    throw new DomainError('invalid', `${attribute} has control characters: cannot be an identifier`, [
      { message: `${attribute} holds control characters`, location: attribute },
    ]);
  }
  if (value.length > identifierBound) {
    throw new DomainError('invalid', `${attribute} is ${value.length} characters long, over the ${identifierBound} kept`, [
      { message: `${attribute} is longer than ${identifierBound} characters`, location: attribute },
    ]);
  }
  if (value.length > vrMaxLength) findings.push({ attribute, problem: `${value.length} characters, over its VR's ${vrMaxLength}: kept in full` });
  return value;
}

/**
 * Descriptive text as the index keeps it, null when empty; never refuses. `measure` is what the
 * VR's maximum length counts: the whole value, or for PN each component group (PS3.5 6.2).
 */
export function readDescriptive(
  attribute: string,
  raw: string | undefined,
  vrMaxLength: number,
  findings: ValueFinding[],
  measure: (value: string) => number = (value) => value.length,
): string | null {
  if (raw === undefined || raw === null) return null;
  let value = withoutPadding(raw);
  if (controls.test(value)) {
    // Line and tab breaks read as spaces; other controls as U+FFFD, a mark that something was there.
    value = withoutPadding(value.replace(controlsGlobal, (control) => ('\t\n\f\r'.includes(control) ? ' ' : '\ufffd')));
    findings.push({ attribute, problem: 'holds control characters: indexed with them replaced' });
  }
  if (value.length === 0) return null;
  if (value.length > descriptiveBound) {
    findings.push({ attribute, problem: `${value.length} characters: indexed cut at ${descriptiveBound}` });
    return value.slice(0, descriptiveBound);
  }
  if (measure(value) > vrMaxLength) findings.push({ attribute, problem: `${measure(value)} characters, over its VR's ${vrMaxLength}: kept in full` });
  return value;
}

/** PN: the longest of the alphabetic, ideographic and phonetic component groups. */
export function longestNameGroup(value: string): number {
  return Math.max(...value.split('=').map((group) => group.length));
}

/** A value the VR parser could not read (a date, a number, a code): indexed as absent. */
export function readParsed<T>(attribute: string, raw: string | undefined, parsed: T | undefined, vr: string, findings: ValueFinding[]): T | null {
  if (parsed !== undefined) return parsed;
  if (raw !== undefined && raw !== null && withoutPadding(raw).length > 0) findings.push({ attribute, problem: `not a valid ${vr}: indexed as absent` });
  return null;
}
