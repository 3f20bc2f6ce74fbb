/**
 * The time zone a site or an integration client reads local times in: an IANA time zone database
 * name ("Europe/London", "America/Chicago", "UTC"). Names are checked against the runtime's own
 * copy of the database (ICU, through Intl), never a list kept here, so a zone added by a tzdata
 * update is accepted as soon as the runtime carries it. Aliases are stored under the name the
 * database links them to ("US/Eastern" becomes "America/New_York").
 */
import { DomainError } from '../errors.ts';

export const maxTimeZoneNameLength = 64;

/** The canonical name of an IANA time zone, or a DomainError 'invalid' naming the field. */
export function normalizeTimeZone(value: string, location = 'time_zone'): string {
  const name = value.trim();
  // Intl also takes fixed offsets ("+01:00"); they carry no daylight-saving rules, so they are
  // not what a site's local time is.
  const refuse = () => {
    throw new DomainError('invalid', `"${name}" is not an IANA time zone name (for example Europe/London, America/New_York or UTC)`, [
      { message: 'not an IANA time zone name', location },
    ]);
  };
  if (name.length === 0 || name.length > maxTimeZoneNameLength || !/^[A-Za-z]/.test(name)) refuse();
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return refuse();
  }
}

/** A time zone setting: blank means none (times without an offset are read as UTC, with a warning). */
export function optionalTimeZone(value: string | null | undefined, location?: string): string | null {
  if (value === undefined || value === null || value.trim() === '') return null;
  return normalizeTimeZone(value, location);
}
