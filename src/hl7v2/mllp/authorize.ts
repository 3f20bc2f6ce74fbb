/**
 * Which registered integration client (and so which site) an MLLP message belongs to
 * (DESIGN.md "HL7 v2.5.1"): the peer's IP must be allowed by an enabled hl7-mllp client, and
 * where that client names a sending application or facility, MSH-3/MSH-4 must match it. The
 * registrations come from memory between credential changes (src/domain/clients/mllp-registrations.ts),
 * so deciding costs no database round trip per message.
 */
import { matchesSender, type IntegrationClient } from '../../domain/clients/integration-clients.ts';
import { mllpRegistrationsForAddress } from '../../domain/clients/mllp-registrations.ts';
import type { Site } from '../../domain/sites/sites.ts';
import type { Queryable } from '../../storage/database.ts';

export type Authorization =
  | { kind: 'authorized'; client: IntegrationClient; site: Site }
  /** siteId: the site concerned, when every client admitting the address is of one site. */
  | { kind: 'refused'; reason: string; siteId?: string };

export async function authorizeSender(db: Queryable, remoteAddress: string, sendingApplication: string, sendingFacility: string): Promise<Authorization> {
  const byAddress = await mllpRegistrationsForAddress(db, remoteAddress);
  if (byAddress.length === 0) return { kind: 'refused', reason: `no integration client admits address ${remoteAddress}` };
  const matching = byAddress.filter(({ client }) => matchesSender(client, sendingApplication, sendingFacility));
  const sites = new Set(byAddress.map(({ site }) => site.id));
  if (matching.length === 0) {
    return { kind: 'refused', ...(sites.size === 1 ? { siteId: [...sites][0]! } : {}), reason: `sender not authorized: MSH-3 "${sendingApplication}" / MSH-4 "${sendingFacility}" match no integration client for this address` };
  }
  // One site's registration never overrides another's (issue 26 point 1): a sender that clients
  // of two sites match is refused, however specific either is. Registration refuses such overlaps
  // unless a service administrator approved them.
  if (new Set(matching.map(({ site }) => site.id)).size > 1) {
    return { kind: 'refused', reason: 'sender not authorized: integration clients of several sites match this sender; register MSH-3/MSH-4 to tell them apart' };
  }
  // Within the site, the most specific registration wins (application and facility, then either, then neither).
  const specificity = ({ client }: { client: IntegrationClient }) => (client.sendingApplication ? 1 : 0) + (client.sendingFacility ? 1 : 0);
  const best = Math.max(...matching.map(specificity));
  const winners = matching.filter((registration) => specificity(registration) === best);
  return { kind: 'authorized', client: winners[0]!.client, site: winners[0]!.site };
}

export async function addressIsRegistered(db: Queryable, remoteAddress: string): Promise<boolean> {
  return (await mllpRegistrationsForAddress(db, remoteAddress)).length > 0;
}
