/**
 * FHIR dates and instants as the ranges they denote. A FHIR date may be partial (yyyy, yyyy-mm):
 * search compares ranges, not points (https://hl7.org/fhir/R4/search.html#date).
 */

export interface DayRange {
  /** First day, ISO yyyy-mm-dd. */
  start: string;
  /** Last day, ISO yyyy-mm-dd (inclusive). */
  end: string;
}

const datePattern = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;

/** The days a FHIR `date` denotes, or undefined when it is not a valid date. */
export function dateRange(value: string): DayRange | undefined {
  const match = datePattern.exec(value);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = match[2] === undefined ? undefined : Number(match[2]);
  const day = match[3] === undefined ? undefined : Number(match[3]);
  if (year < 1) return undefined;
  if (month === undefined) return { start: `${match[1]}-01-01`, end: `${match[1]}-12-31` };
  if (month < 1 || month > 12) return undefined;
  const lastDay = daysInMonth(year, month);
  const mm = match[2]!;
  if (day === undefined) return { start: `${match[1]}-${mm}-01`, end: `${match[1]}-${mm}-${String(lastDay).padStart(2, '0')}` };
  if (day < 1 || day > lastDay) return undefined;
  return { start: value, end: value };
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export interface InstantRange {
  /** Inclusive lower bound. */
  start: Date;
  /** Exclusive upper bound. */
  end: Date;
}

const dateTimePattern =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

/**
 * The instants a FHIR `dateTime` search value denotes, to its precision. Values with a time need a
 * zone (a server cannot guess the client's); dates without a time are taken in UTC.
 */
export function instantRange(value: string): InstantRange | undefined {
  const match = dateTimePattern.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  if (h !== undefined && zone === undefined) return undefined;
  if (h === undefined) {
    const days = dateRange([y, mo, d].filter((part) => part !== undefined).join('-'));
    if (!days) return undefined;
    const end = new Date(`${days.end}T00:00:00Z`);
    end.setUTCDate(end.getUTCDate() + 1);
    return { start: new Date(`${days.start}T00:00:00Z`), end };
  }
  if (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 60)) return undefined;
  // Second 60 is a leap second, which FHIR's dateTime and instant allow (datatypes.html#dateTime)
  // and Date cannot represent: it is indexed as second 59 of its minute, so that it stays in its
  // own minute and day (2016-12-31T23:59:60Z is found by date=2016-12-31).
  const second = s === '60' ? '59' : (s ?? '00');
  const start = new Date(`${y}-${mo}-${d}T${h}:${mi}:${second}${fraction ? `.${fraction.slice(0, 3).padEnd(3, '0')}` : ''}${zone}`);
  if (Number.isNaN(start.getTime())) return undefined;
  const step = fraction ? 10 ** (3 - Math.min(fraction.length, 3)) : s !== undefined ? 1000 : 60_000;
  return { start, end: new Date(start.getTime() + step) };
}

/**
 * An instant as PostgreSQL reads it. FHIR instants run from year 1 to 9999, but a range bound can
 * fall outside (9999-12-31T23:59:59Z ends at year 10000; 0001-01-01T00:00:00+14:00 starts in
 * year 0 UTC), which toISOString writes in a form PostgreSQL refuses. No stored instant lies out
 * there, so such a bound is the infinity on its side and every comparison stays exact.
 */
export function timestampText(instant: Date): string {
  const year = instant.getUTCFullYear();
  if (year > 9999) return 'infinity';
  if (year < 1) return '-infinity';
  return instant.toISOString();
}

/** The instants a stored value covers, as PostgreSQL timestamps: from `start`, up to but not including `end`. */
export interface StoredInstantRange {
  start: string;
  end: string;
}

/**
 * The instants a stored dateTime, instant or Period covers (search.html#date): a dateTime to its
 * precision, a Period from its start's first instant to its end's last, a missing start or end
 * open on that side. Undefined for a value that is no date, or a Period with neither bound.
 */
export function storedInstantRange(value: unknown): StoredInstantRange | undefined {
  if (typeof value === 'string') {
    const range = instantRange(value);
    return range && { start: timestampText(range.start), end: timestampText(range.end) };
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { start, end } = value as { start?: unknown; end?: unknown };
  if (start === undefined && end === undefined) return undefined;
  const from = start === undefined ? undefined : typeof start === 'string' ? instantRange(start) : null;
  const to = end === undefined ? undefined : typeof end === 'string' ? instantRange(end) : null;
  if (from === null || to === null) return undefined;
  return { start: from ? timestampText(from.start) : '-infinity', end: to ? timestampText(to.end) : 'infinity' };
}
