// @ts-check
/**
 * Every time the app shows is in the browser's time zone, with seconds and its UTC offset
 * ("2026-11-25 14:03:22 UTC+01:00"), so two readers in different zones, or a reader and a log,
 * can compare times without guessing; the zone's name is shown once per page (zoneNote).
 * A value that is only a date (a FHIR date, a birth date) is a date in no zone and gets no label.
 */

/** @param {number} n */
const two = (n) => String(n).padStart(2, '0');

/** "UTC", "UTC+01:00", "UTC-05:30": the browser's offset at that instant. @param {Date} date */
export function offsetLabel(date) {
  const minutes = -date.getTimezoneOffset();
  if (minutes === 0) return 'UTC';
  const sign = minutes > 0 ? '+' : '-';
  const abs = Math.abs(minutes);
  return `UTC${sign}${two(Math.floor(abs / 60))}:${two(abs % 60)}`;
}

/** The browser's IANA zone name (Europe/Paris), or its offset where the browser names none. */
export function browserTimeZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || offsetLabel(new Date());
}

/** An instant (ISO 8601 with Z or an offset) in the browser's zone, labelled. @param {string | null | undefined} iso */
export function formatInstant(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())} ${offsetLabel(date)}`;
}

/**
 * A FHIR dateTime: a date or partial date ("2026", "2026-11", "2026-11-20") stays as written; a
 * time (which FHIR requires to carry its offset) is shown as an instant.
 * @param {string | null | undefined} value
 */
export function formatFhirDateTime(value) {
  if (!value) return '—';
  return value.includes('T') ? formatInstant(value) : value;
}

/**
 * An instant as the value of an <input type="datetime-local">, which holds wall-clock time in the
 * browser's zone (not UTC): what new Date(value) reads back as the same instant.
 * @param {string | null | undefined} iso
 */
export function localInputValue(iso) {
  if (!iso) return undefined;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return undefined;
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())}T${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** The once-per-page note naming the zone the times are in. */
export function zoneNote() {
  const zone = browserTimeZone();
  const offset = offsetLabel(new Date());
  return zone === offset ? `Times are shown in ${offset}.` : `Times are shown in your browser's time zone, ${zone} (now ${offset}).`;
}

/** The browser's zone and its offset now, for labelling inputs of local date and time ("Europe/Paris, UTC+01:00"). */
export function browserZone() {
  const zone = browserTimeZone();
  const offset = offsetLabel(new Date());
  return zone === offset ? offset : `${zone}, ${offset}`;
}

/**
 * A datetime-local value ("2026-03-01T08:00") read in the browser's zone as an ISO instant;
 * undefined when empty or not a date.
 * @param {string | null | undefined} local
 */
export function localToIso(local) {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
