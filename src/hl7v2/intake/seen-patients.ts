/**
 * Business identifiers that this process has seen belong to a patient of the site, the most
 * recently used last. An admission of one of them is a readmission: trying it first as a new
 * patient in one round trip (recordNewPatientMessage) would cost a validation and a round trip
 * before the ordinary transaction (measured, ADT^A01 for known patients: 0.65-0.91x the
 * messages a second without the attempt). Only a hint of which path to take first: a patient
 * merged away or deleted since is still found or created correctly by the ordinary path.
 */
const limit = 10_000;

const seen = new Map<string, true>();

function key(siteId: string, identifier: string): string {
  return `${siteId}|${identifier}`;
}

/** True when the identifier was seen as a patient of the site; keeps it among the recent. */
export function seenPatient(siteId: string, identifier: string): boolean {
  const k = key(siteId, identifier);
  if (!seen.delete(k)) return false;
  seen.set(k, true);
  return true;
}

export function noteSeenPatient(siteId: string, identifier: string): void {
  const k = key(siteId, identifier);
  seen.delete(k);
  seen.set(k, true);
  if (seen.size > limit) seen.delete(seen.keys().next().value!);
}
