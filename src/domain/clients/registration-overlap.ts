/**
 * Whether a registration could receive messages another site's registration receives (issue 26
 * point 1): its allowed addresses overlap, and each of MSH-3 and MSH-4 is the same or unset on
 * one side. Such a registration would either take another site's feed or have that site's
 * sender refused, so it is refused unless a service administrator approves it. The refusal does
 * not say which site: a site administrator learns only that the traffic is someone else's.
 */
import { BlockList, isIP } from 'node:net';
import type { Queryable } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';

export interface RegistrationScope {
  allowedIps: readonly string[];
  sendingApplication: string | null;
  sendingFacility: string | null;
}

/** Two entries (address, CIDR or *) admit a common address. Prefixes nest or are disjoint. */
function entriesOverlap(left: string, right: string): boolean {
  if (left === '*' || right === '*') return true;
  const [leftAddress, leftPrefix] = left.split('/');
  const [rightAddress, rightPrefix] = right.split('/');
  const leftFamily = isIP(leftAddress!);
  if (leftFamily !== isIP(rightAddress!)) return false;
  const full = leftFamily === 6 ? 128 : 32;
  const leftBits = leftPrefix === undefined ? full : Number(leftPrefix);
  const rightBits = rightPrefix === undefined ? full : Number(rightPrefix);
  // The wider range contains the narrower one exactly when it contains any of its addresses.
  const [wideAddress, wideBits, narrowAddress] = leftBits <= rightBits ? [leftAddress!, leftBits, rightAddress!] : [rightAddress!, rightBits, leftAddress!];
  const type = leftFamily === 6 ? 'ipv6' : 'ipv4';
  const range = new BlockList();
  range.addSubnet(wideAddress, wideBits, type);
  return range.check(narrowAddress, type);
}

const hd1 = (value: string | null) => (value === null ? null : value.split('^')[0]!.trim());
const sameOrUnset = (left: string | null, right: string | null) => left === null || right === null || hd1(left) === hd1(right);

export function registrationsOverlap(left: RegistrationScope, right: RegistrationScope): boolean {
  return (
    sameOrUnset(left.sendingApplication, right.sendingApplication) &&
    sameOrUnset(left.sendingFacility, right.sendingFacility) &&
    left.allowedIps.some((mine) => right.allowedIps.some((theirs) => entriesOverlap(mine, theirs)))
  );
}

// Serialises the check-then-write of registrations across processes, so two sites registering
// overlapping clients at the same moment cannot both pass (held to the end of the transaction).
const registrationLockKey = 7_355_608_570;

/**
 * Refuses `scope` for `siteId` when it overlaps an enabled MLLP registration of another site,
 * unless approved by a service administrator (then the caller audits the approval).
 */
export async function refuseCrossSiteOverlap(db: Queryable, siteId: string, scope: RegistrationScope, approved: boolean): Promise<{ overlaps: boolean }> {
  await db.query('SELECT pg_advisory_xact_lock($1)', [registrationLockKey]);
  const { rows } = await db.query<{ allowed_ips: string[]; sending_application: string | null; sending_facility: string | null }>(
    `SELECT allowed_ips, sending_application, sending_facility FROM integration_client
      WHERE protocol = 'hl7-mllp' AND enabled AND site_id <> $1`,
    [siteId],
  );
  const overlaps = rows.some((row) => registrationsOverlap(scope, { allowedIps: row.allowed_ips, sendingApplication: row.sending_application, sendingFacility: row.sending_facility }));
  if (overlaps && !approved) {
    const message =
      'these allowed IPs and sending application/facility could match messages that an integration client of another site receives; ' +
      'narrow the allowed IPs or name MSH-3/MSH-4 precisely, or ask a service administrator to approve the overlap';
    throw new DomainError('conflict', message, [{ message: 'overlaps another site\'s integration client', location: 'allowed_ips' }]);
  }
  return { overlaps };
}
