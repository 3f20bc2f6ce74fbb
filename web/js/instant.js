// @ts-check
/**
 * Instants as operators read them: to the second, with the time zone named, in the browser's
 * zone (the zone name is part of every text, so "16:35:07 UTC" and "17:35:07 CET" never mix).
 */

const withSeconds = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short',
});

/** @param {string | null | undefined} iso */
export function formatInstant(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : withSeconds.format(date);
}

/** The browser's zone, for labelling inputs of local date and time. */
export function browserZone() {
  const parts = withSeconds.formatToParts(new Date());
  const short = parts.find((part) => part.type === 'timeZoneName')?.value;
  const iana = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return short && iana && short !== iana ? `${iana}, ${short}` : (iana ?? short ?? 'local time');
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
