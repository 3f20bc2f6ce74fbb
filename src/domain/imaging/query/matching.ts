/**
 * PS3.4 C.2.2.2 attribute matching, turned into SQL conditions with bound parameters. The match
 * values arrive as DICOM strings (the same syntax for a C-FIND identifier and a QIDO-RS query
 * parameter, PS3.18 8.3.4), so both surfaces hand them over unchanged.
 */
import { DomainError } from '../../errors.ts';
import { parseDicomDate, parseDicomTime } from '../dicom-values.ts';

/** Collects bound parameters and hands out their $n placeholders. */
export class SqlParameters {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** C.2.2.2.3: a zero-length value, or one made of '*' only, matches everything. */
export function isUniversal(value: string | undefined): value is undefined {
  return value === undefined || value.trim() === '' || /^\*+$/.test(value.trim());
}

function hasWildcard(value: string): boolean {
  return /[*?]/.test(value);
}

/** '*' and '?' to LIKE's '%' and '_', escaping LIKE's own metacharacters first. */
export function likePattern(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%').replace(/\?/g, '_');
}

/**
 * C.2.2.2.1 single value and C.2.2.2.4 wildcard matching of a string column. Person names match
 * case-insensitively (C.2.2.2.1 allows it for PN; clinicians type names in any case), other
 * strings exactly.
 */
export function textCondition(column: string, value: string | undefined, params: SqlParameters, options: { caseInsensitive?: boolean } = {}): string | undefined {
  if (isUniversal(value)) return undefined;
  const text = value.replace(/^ +| +$/g, '');
  const target = options.caseInsensitive ? `lower(${column})` : column;
  const operand = options.caseInsensitive ? text.toLowerCase() : text;
  if (hasWildcard(text)) return `${target} LIKE ${params.add(likePattern(operand))}`;
  return `${target} = ${params.add(operand)}`;
}

/** C.2.2.2.2 list of UID matching: a backslash-separated list, any of which matches. */
export function uidListCondition(column: string, value: string | undefined, params: SqlParameters, location: string): string | undefined {
  const uids = uidList(value, location);
  if (!uids) return undefined;
  return uids.length === 1 ? `${column} = ${params.add(uids[0])}` : `${column} = ANY (${params.add(uids)}::text[])`;
}

/** The UIDs of a list-of-UID key, or undefined for universal matching. */
export function uidList(value: string | undefined, location: string): string[] | undefined {
  if (value === undefined) return undefined;
  const uids = value
    .split('\\')
    .map((uid) => uid.replace(/[\0 ]+$/, '').trim())
    .filter((uid) => uid.length > 0);
  if (uids.length === 0) return undefined;
  for (const uid of uids) {
    if (uid.length > 64 || !/^[0-9.]+$/.test(uid)) throw invalid(`${location} holds a value that is not a UID`, location);
  }
  if (uids.length > 1000) throw invalid(`${location} lists more than 1000 UIDs`, location);
  return uids;
}

/** Several values (backslash-separated) of a code string key such as ModalitiesInStudy: any matches. */
export function codeList(value: string | undefined): string[] | undefined {
  if (isUniversal(value)) return undefined;
  const codes = value
    .split('\\')
    .map((code) => code.trim())
    .filter((code) => code.length > 0 && !/^\*+$/.test(code));
  return codes.length > 0 ? codes : undefined;
}

/** C.2.2.2.5 range matching of DA: "A", "A-B", "A-", "-B" (bounds inclusive). */
export function dateCondition(column: string, value: string | undefined, params: SqlParameters, location: string): string | undefined {
  const range = parseRange(value, parseDicomDate, location, 'a date or date range (YYYYMMDD-YYYYMMDD)');
  return range && boundConditions(column, 'date', range.lower, range.upper, params);
}

/** C.2.2.2.5 range matching of TM; a partial time at the top of a range reaches the end of its unit. */
export function timeCondition(column: string, value: string | undefined, params: SqlParameters, location: string): string | undefined {
  const range = parseRange(value, parseDicomTime, location, 'a time or time range (HHMMSS-HHMMSS)');
  return range && boundConditions(column, 'time', range.lower, range.upper && endOfUnit(range.rawUpper!, range.upper), params);
}

interface Range {
  lower?: string;
  upper?: string;
  rawUpper?: string;
}

function parseRange(value: string | undefined, parse: (text: string) => string | undefined, location: string, expected: string): Range | undefined {
  if (isUniversal(value)) return undefined;
  const text = value.trim();
  const [from, to] = text.includes('-') ? splitRange(text) : [text, text];
  const lower = from ? parse(from) : undefined;
  const upper = to ? parse(to) : undefined;
  if ((from && !lower) || (to && !upper) || (!lower && !upper)) throw invalid(`${location} is not ${expected}`, location);
  return { lower, upper, rawUpper: to };
}

function boundConditions(column: string, type: string, lower: string | undefined, upper: string | undefined, params: SqlParameters): string {
  const conditions: string[] = [];
  if (lower) conditions.push(`${column} >= ${params.add(lower)}::${type}`);
  if (upper) conditions.push(`${column} <= ${params.add(upper)}::${type}`);
  return conditions.join(' AND ');
}

/** An integer (IS) key: single value matching only. */
export function integerCondition(column: string, value: string | undefined, params: SqlParameters, location: string): string | undefined {
  if (isUniversal(value)) return undefined;
  const text = value.trim();
  if (!/^[+-]?\d{1,10}$/.test(text) || Math.abs(Number(text)) > 2 ** 31 - 1) throw invalid(`${location} is not an integer`, location);
  return `${column} = ${params.add(Number(text))}`;
}

function splitRange(text: string): [string, string] {
  const dash = text.indexOf('-');
  return [text.slice(0, dash).trim(), text.slice(dash + 1).trim()];
}

/** "12" means up to 12:59:59.999999, "1230" up to 12:30:59.999999. */
function endOfUnit(raw: string, parsed: string): string {
  const digits = raw.replace(/:/g, '');
  if (digits.length === 2) return `${parsed.slice(0, 2)}:59:59.999999`;
  if (digits.length === 4) return `${parsed.slice(0, 5)}:59.999999`;
  if (!digits.includes('.')) return `${parsed}.999999`;
  return parsed;
}

function invalid(message: string, location: string): DomainError {
  return new DomainError('invalid', message, [{ message, location }]);
}
