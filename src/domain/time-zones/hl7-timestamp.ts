/**
 * HL7 v2 DT/DTM (HL7 v2.5.1 section 2.A.21/2.A.22: YYYY[MM[DD[HH[MM[SS[.S…]]]]]][+/-ZZZZ]), and
 * the HL7 v3 TS of the same form, to FHIR date and dateTime. FHIR requires a zone once a time is present. A DTM without an offset is in
 * the sender's local time (section 2.A.22: "the time zone of the sender"), so it is read in the
 * time zone configured for the sender (its integration client's, else its site's), daylight
 * saving applied for that instant (src/domain/time-zones/local-time.ts); with none configured it
 * is read as UTC and the caller warns. A value without a time stays a date: no zone is invented.
 */
import { readLocalTime } from './local-time.ts';

const dtm = /^(\d{4})(?:(\d{2})(?:(\d{2})(?:(\d{2})(?:(\d{2})(?:(\d{2})(?:\.(\d{1,4}))?)?)?)?)?)?([+-]\d{4})?$/;

export interface ParsedDateTime {
  /** FHIR date: YYYY, YYYY-MM or YYYY-MM-DD */
  date: string;
  /** FHIR dateTime (with a zone when a time is present) */
  dateTime: string;
  /** True when a time was given without an offset, no time zone was configured, and UTC was assumed. */
  assumedUtc: boolean;
}

/** What a mapper needs to read times without an offset. */
export interface LocalTimeSetting {
  /** IANA zone of the sender's times without an offset; absent or null: read as UTC. */
  timeZone?: string | null;
}

const two = (n: number) => String(n).padStart(2, '0');

/** `timeZone`: the IANA zone of the sender's local times, or null/undefined when none is configured. */
export function parseHl7DateTime(value: string, timeZone?: string | null): ParsedDateTime | undefined {
  const match = dtm.exec(value.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction, offset] = match;
  if (month !== undefined && (Number(month) < 1 || Number(month) > 12)) return undefined;
  if (day !== undefined) {
    const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
    if (Number(day) < 1 || Number(day) > daysInMonth) return undefined;
  }
  if (hour !== undefined && Number(hour) > 23) return undefined;
  if (minute !== undefined && Number(minute) > 59) return undefined;
  if (second !== undefined && Number(second) > 59) return undefined;
  if (offset !== undefined && (Number(offset.slice(1, 3)) > 14 || Number(offset.slice(3)) > 59)) return undefined;
  const date = [year, month, day].filter((part) => part !== undefined).join('-');
  if (hour === undefined) return { date, dateTime: date, assumedUtc: false };
  const digits = fraction ? `.${fraction}` : '';
  if (offset === undefined && timeZone) {
    // A time needs a day to be an instant; YYYYHH cannot match, so month and day are present.
    const local = readLocalTime(
      { year: Number(year), month: Number(month), day: Number(day), hour: Number(hour), minute: Number(minute ?? 0), second: Number(second ?? 0), millisecond: 0 },
      timeZone,
    );
    const wall = local.wall;
    return { date, dateTime: `${String(wall.year).padStart(4, '0')}-${two(wall.month)}-${two(wall.day)}T${two(wall.hour)}:${two(wall.minute)}:${two(wall.second)}${digits}${local.offset}`, assumedUtc: false };
  }
  const time = `${hour}:${minute ?? '00'}:${second ?? '00'}${digits}`;
  const zone = offset ? `${offset.slice(0, 3)}:${offset.slice(3)}` : 'Z';
  return { date, dateTime: `${date}T${time}${zone}`, assumedUtc: offset === undefined };
}
