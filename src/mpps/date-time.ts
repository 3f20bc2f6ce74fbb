/**
 * RFC 3339 section 5.6 date-time with a mandatory offset ("2026-01-02T10:20:00+01:00", "…Z").
 * A modality's local time without an offset would be read in the server's zone, which is a guess:
 * the intake refuses it instead. JavaScript's Date rolls 30 February over to March, so the
 * calendar is checked here, not left to Date.parse.
 */
const pattern = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

export function parseDateTime(value: string): Date | undefined {
  const match = pattern.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Date.UTC reads years 0-99 as 1900-1999, and no modality performed a procedure before 1900.
  if (year < 1900) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  // RFC 3339 allows second 60 (a leap second); Date.UTC folds it into the next minute.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  if (match[9] !== undefined) {
    const [offsetHours, offsetMins] = [Number(match[9]), Number(match[10])];
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (match[8]!.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // Milliseconds are what Date holds; finer digits are dropped.
  const milliseconds = match[7] ? Math.floor(Number(`0${match[7]}`) * 1000) : 0;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, milliseconds) - offsetMinutes * 60_000);
}
