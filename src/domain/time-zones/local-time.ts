/**
 * A local wall-clock time (a time without a UTC offset, as HL7 v2 DTM and DICOM DA/TM often are)
 * read in an IANA time zone, with the daylight-saving rule in force at that instant.
 *
 * Twice a year a wall-clock time does not name exactly one instant. The rule is the one RFC 5545
 * section 3.3.5 gives for iCalendar and ECMAScript Temporal calls "compatible":
 * - in a fall-back overlap (01:30 happens twice), the earlier instant, the one before the clocks
 *   went back;
 * - in a spring-forward gap (02:30 never happens), the time is moved forward by the length of the
 *   gap (02:30 becomes 03:30 summer time), read with the offset in force before the change.
 * Offsets come from the runtime's IANA database (Intl), so historical rules apply too.
 */

export interface WallClock {
  year: number;
  /** 1 to 12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Milliseconds to add to UTC to get the zone's wall clock at this instant. */
export function offsetAt(epochMs: number, timeZone: string): number {
  const parts: Record<string, string> = {};
  for (const part of formatterFor(timeZone).formatToParts(epochMs)) parts[part.type] = part.value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  const wall = utcOf({ year, month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour), minute: Number(parts.minute), second: Number(parts.second), millisecond: 0 });
  const whole = epochMs - (((epochMs % 1000) + 1000) % 1000);
  return wall - whole;
}

/** The wall clock's fields read as if they were UTC (Date.UTC without its 0-99 year quirk). */
function utcOf(wall: WallClock): number {
  const date = new Date(0);
  date.setUTCFullYear(wall.year, wall.month - 1, wall.day);
  date.setUTCHours(wall.hour, wall.minute, wall.second, wall.millisecond);
  return date.getTime();
}

const day = 86_400_000;

/** The instant this wall-clock time names in the zone (rules for overlaps and gaps above). */
export function instantOf(wall: WallClock, timeZone: string): Date {
  const local = utcOf(wall);
  // No zone changes its offset twice within two days, so the offsets a day either side are the
  // only candidates (Temporal's GetPossibleEpochNanoseconds does the same).
  const before = offsetAt(local - day, timeZone);
  const after = offsetAt(local + day, timeZone);
  const candidates = [...new Set([before, after])]
    .map((offset) => local - offset)
    .filter((instant) => instant + offsetAt(instant, timeZone) === local)
    .sort((a, b) => a - b);
  // Overlap: two candidates, the earlier wins. Gap: none; the offset before the change moves the
  // time forward by the gap.
  return new Date(candidates[0] ?? local - before);
}

/** "+01:00", "-05:00", "+00:00" (FHIR dateTime and RFC 3339 spell UTC either way; +00:00 keeps the zone's form). */
export function formatOffset(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const sign = offsetMs < 0 ? '-' : '+';
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

export interface ZonedTime {
  instant: Date;
  /** The wall clock in the zone at that instant (differs from the input only in a gap). */
  wall: WallClock;
  /** The zone's offset at that instant, "+01:00". */
  offset: string;
}

/**
 * The instant, and how the zone writes it. A zone whose offset at that instant is not whole
 * minutes (local mean time before the zone adopted standard time) is written in UTC, since an
 * ISO 8601 offset has no seconds.
 */
export function readLocalTime(wall: WallClock, timeZone: string): ZonedTime {
  const instant = instantOf(wall, timeZone);
  let offset = offsetAt(instant.getTime(), timeZone);
  if (offset % 60_000 !== 0) offset = 0;
  const shifted = new Date(instant.getTime() + offset);
  return {
    instant,
    wall: {
      year: shifted.getUTCFullYear(),
      month: shifted.getUTCMonth() + 1,
      day: shifted.getUTCDate(),
      hour: shifted.getUTCHours(),
      minute: shifted.getUTCMinutes(),
      second: shifted.getUTCSeconds(),
      millisecond: shifted.getUTCMilliseconds(),
    },
    offset: formatOffset(offset),
  };
}
