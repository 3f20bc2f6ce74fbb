/**
 * Which registered integration client (and so which site) an MLLP message belongs to
 * (DESIGN.md "HL7 v2.5.1"): the peer's IP must be allowed by an enabled hl7-mllp client, and
 * where that client names a sending application or facility, MSH-3/MSH-4 must match it.
 */
import { findMllpClientsForAddress, matchesSender, type IntegrationClient } from '../../domain/clients/integration-clients.ts';
import type { Queryable } from '../../storage/database.ts';

export type Authorization =
  | { kind: 'authorized'; client: IntegrationClient }
  | { kind: 'refused'; reason: string };

export async function authorizeSender(db: Queryable, remoteAddress: string, sendingApplication: string, sendingFacility: string): Promise<Authorization> {
  const byAddress = await findMllpClientsForAddress(db, remoteAddress);
  if (byAddress.length === 0) return { kind: 'refused', reason: `no integration client admits address ${remoteAddress}` };
  const matching = byAddress.filter((client) => matchesSender(client, sendingApplication, sendingFacility));
  if (matching.length === 0) {
    return { kind: 'refused', reason: `sender not authorized: MSH-3 "${sendingApplication}" / MSH-4 "${sendingFacility}" match no integration client for this address` };
  }
  // The most specific registration wins (application and facility, then either, then neither).
  const specificity = (c: IntegrationClient) => (c.sendingApplication ? 1 : 0) + (c.sendingFacility ? 1 : 0);
  const best = Math.max(...matching.map(specificity));
  const winners = matching.filter((c) => specificity(c) === best);
  if (new Set(winners.map((c) => c.siteId)).size > 1) {
    return { kind: 'refused', reason: 'sender not authorized: integration clients of several sites match this sender; register MSH-3/MSH-4 to tell them apart' };
  }
  return { kind: 'authorized', client: winners[0]! };
}

export async function addressIsRegistered(db: Queryable, remoteAddress: string): Promise<boolean> {
  return (await findMllpClientsForAddress(db, remoteAddress)).length > 0;
}
