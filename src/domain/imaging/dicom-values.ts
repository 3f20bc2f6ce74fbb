/**
 * DICOM value-representation rules the imaging domain needs (PS3.5 section 6.2 and 9.1), applied
 * to the plain strings that surfaces hand over. Index values are read leniently: a malformed study
 * date must not cost a modality its image, so it is indexed as absent (the file keeps the value).
 */

/** PS3.5 9.1: at most 64 characters, digits and dots, no empty component, no leading zero. */
const strictUid = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*$/;
const lenientUid = /^[0-9.]+$/;

export const maxUidLength = 64;

/** The full PS3.5 9.1 rule; used where the service is the first to see a UID (MPPS intake). */
export function isStrictDicomUid(value: string): boolean {
  return value.length >= 1 && value.length <= maxUidLength && strictUid.test(value);
}

/**
 * The rule for UIDs arriving inside stored instances: digits and dots within 64 characters.
 * Leading zeros in components are tolerated there, because real modalities emit them and the
 * dataset is kept as received anyway.
 */
export function isLenientDicomUid(value: string): boolean {
  return value.length >= 1 && value.length <= maxUidLength && lenientUid.test(value);
}

/**
 * Trims the padding DICOM allows (trailing spaces, trailing NUL for UIDs, leading spaces for most
 * text VRs) and drops NUL characters, which PostgreSQL text cannot hold. Blank becomes undefined.
 */
export function cleanText(value: string | undefined | null, maxLength = 1024): string | undefined {
  if (value === undefined || value === null) return undefined;
  const cleaned = value.replace(/\u0000/g, '').trim();
  if (cleaned.length === 0) return undefined;
  return cleaned.length > maxLength ? cleaned.slice(0, maxLength) : cleaned;
}

/** DA (PS3.5 table 6.2-1): YYYYMMDD, or the ACR-NEMA form YYYY.MM.DD; also ISO YYYY-MM-DD. */
export function parseDicomDate(value: string | undefined): string | undefined {
  const text = cleanText(value, 32);
  if (!text) return undefined;
  const match = /^(\d{4})[.-]?(\d{2})[.-]?(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return undefined;
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > lastDay) return undefined;
  return `${match[1]}-${match[2]}-${match[3]}`;
}

/** TM (PS3.5 table 6.2-1): HH[MM[SS[.F{1,6}]]], also the ACR-NEMA form HH:MM:SS. */
export function parseDicomTime(value: string | undefined): string | undefined {
  const text = cleanText(value, 32);
  if (!text) return undefined;
  const match = /^(\d{2})(?::?(\d{2})(?::?(\d{2})(?:\.(\d{1,6}))?)?)?$/.exec(text);
  if (!match) return undefined;
  const hours = Number(match[1]);
  const minutes = Number(match[2] ?? '0');
  // PS3.5 allows 60 for a leap second; PostgreSQL's time type does too.
  const seconds = Number(match[3] ?? '0');
  if (hours > 23 || minutes > 59 || seconds > 60) return undefined;
  const fraction = match[4] ? `.${match[4]}` : '';
  return `${match[1]}:${match[2] ?? '00'}:${match[3] ?? '00'}${fraction}`;
}

/** IS (PS3.5 table 6.2-1): a signed integer in 12 characters; out of int4 range is absent. */
export function parseIntegerString(value: string | undefined): number | undefined {
  const text = cleanText(value, 32);
  if (!text || !/^[+-]?\d{1,12}$/.test(text)) return undefined;
  const number = Number(text);
  return number >= -2_147_483_648 && number <= 2_147_483_647 ? number : undefined;
}

/** CS Patient's Sex (0010,0040): M, F or O; anything else is unknown. */
export function parseSex(value: string | undefined): 'M' | 'F' | 'O' | undefined {
  const text = cleanText(value, 16)?.toUpperCase();
  return text === 'M' || text === 'F' || text === 'O' ? text : undefined;
}

/** CS Modality (0008,0060): upper-case letters, digits, underscore, at most 16 characters. */
export function parseModality(value: string | undefined): string | undefined {
  const text = cleanText(value, 16)?.toUpperCase();
  return text && /^[A-Z0-9_ ]+$/.test(text) ? text : undefined;
}

export interface PersonName {
  family?: string;
  given: string[];
  prefix?: string;
  suffix?: string;
}

/**
 * PN (PS3.5 6.2.1): up to three '='-separated groups (alphabetic, ideographic, phonetic), each
 * family^given^middle^prefix^suffix. The alphabetic group is the one a display needs; a name
 * written only in ideographic or phonetic characters (Annexes H, I, J) is read from those.
 */
export function parsePersonName(value: string | undefined): PersonName | undefined {
  const text = cleanText(value, 1024);
  if (!text) return undefined;
  for (const group of text.split('=')) {
    const name = nameGroup(group);
    if (name) return name;
  }
  return undefined;
}

function nameGroup(group: string): PersonName | undefined {
  const [family, given, middle, prefix, suffix] = group.split('^').map((part) => part.trim());
  const name: PersonName = { given: [given, middle].filter((part): part is string => !!part) };
  if (family) name.family = family;
  if (prefix) name.prefix = prefix;
  if (suffix) name.suffix = suffix;
  if (!name.family && name.given.length === 0) return undefined;
  return name;
}

/** "Family, Given Middle" for lists; undefined when the name has no alphabetic part. */
export function displayPersonName(value: string | undefined): string | undefined {
  const name = parsePersonName(value);
  if (!name) return undefined;
  const given = name.given.join(' ');
  if (name.family && given) return `${name.family}, ${given}`;
  return name.family ?? given;
}
