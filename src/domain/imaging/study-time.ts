/**
 * When a study started, as an instant. StudyDate and StudyTime (PS3.3 C.7.2.1) are the
 * modality's local wall clock without an offset. Timezone Offset From UTC (0008,0201), when the
 * instance carries it, says which offset that clock was at (PS3.3 C.12.1.1.8) and wins; otherwise
 * the site's configured time zone applies, with daylight saving for that instant
 * (src/domain/time-zones/local-time.ts). Without either, no instant is claimed: the study keeps its
 * date and time as received, and a date alone never becomes an instant.
 */
import { formatOffset, readLocalTime, type WallClock } from '../time-zones/local-time.ts';

const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/;
const isoTime = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;

/** A study's date and time (YYYY-MM-DD, hh:mm:ss[.ffffff]) as one wall clock; undefined without both. */
function wallClockOf(studyDate: string | null, studyTime: string | null): WallClock | undefined {
  const d = studyDate ? isoDate.exec(studyDate) : null;
  const t = studyTime ? isoTime.exec(studyTime) : null;
  if (!d || !t) return undefined;
  return {
    year: Number(d[1]),
    month: Number(d[2]),
    day: Number(d[3]),
    hour: Number(t[1]),
    minute: Number(t[2]),
    second: Number(t[3]),
    millisecond: Math.floor(Number(`0.${t[4] ?? '0'}`) * 1000),
  };
}

const asIfUtc = (wall: WallClock) => Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second, wall.millisecond);

/**
 * `studyDate` YYYY-MM-DD and `studyTime` hh:mm:ss[.ffffff] as parseDicomDate/parseDicomTime give
 * them; `offset` the raw (0008,0201) value; `siteTimeZone` the site's IANA zone or null.
 */
export function studyStartedAt(studyDate: string | null, studyTime: string | null, offset: string | undefined, siteTimeZone: string | null): Date | null {
  const wall = wallClockOf(studyDate, studyTime);
  if (!wall) return null;
  const offsetMinutes = parseTimezoneOffset(offset);
  if (offsetMinutes !== undefined) return new Date(asIfUtc(wall) - offsetMinutes * 60_000);
  return siteTimeZone ? readLocalTime(wall, siteTimeZone).instant : null;
}

/**
 * Timezone Offset From UTC (SH, PS3.3 C.12.1.1.8): "&ZZXX", & being + or -, ZZ hours and XX
 * minutes; real offsets run from -12:00 to +14:00. Anything else is ignored (the site's zone then
 * applies): a malformed descriptive value must not cost a modality its image.
 */
export function parseTimezoneOffset(value: string | undefined): number | undefined {
  const match = /^([+-])(\d{2})(\d{2})$/.exec(value?.trim() ?? '');
  if (!match) return undefined;
  const minutes = (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
  return Number(match[3]) < 60 && minutes >= -12 * 60 && minutes <= 14 * 60 ? minutes : undefined;
}

/**
 * The FHIR dateTime of a study: its wall clock as received, with the offset that makes it the
 * stored instant ("2026-07-01T09:30:00+01:00"); the date alone when no instant is known.
 */
export function studyDateTime(studyDate: string | null, studyTime: string | null, startedAt: Date | null): string | null {
  if (!studyDate) return null;
  const wall = wallClockOf(studyDate, studyTime);
  if (!startedAt || !wall) return studyDate;
  const offset = asIfUtc(wall) - startedAt.getTime();
  // Whole minutes always, unless the instant came from a zone's local mean time: then UTC.
  if (offset % 60_000 !== 0) return startedAt.toISOString();
  return `${studyDate}T${studyTime}${formatOffset(offset)}`;
}
