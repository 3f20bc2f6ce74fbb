import { randomUUID } from 'node:crypto';
import { TrafficCounter } from '../../../src/domain/activity/traffic-counter.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import type { Queryable } from '../../../src/storage/database.ts';

export async function addClient(db: Queryable, site: SiteContext, name: string): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO integration_client (id, site_id, name, protocol, allowed_ips) VALUES ($1, $2, $3, 'hl7-mllp', '{127.0.0.1}')`, [id, site.siteId, name]);
  return id;
}

export async function addKey(db: Queryable, site: SiteContext, label: string): Promise<{ id: string; prefix: string }> {
  const userId = randomUUID();
  await db.query(`INSERT INTO app_user (id, site_id, email, role) VALUES ($1, $2, $3, 'clinician')`, [userId, site.siteId, `${userId}@example.org`]);
  const key = { id: randomUUID(), prefix: randomUUID().replace(/-/g, '').slice(0, 12) };
  await db.query(`INSERT INTO api_key (id, site_id, user_id, prefix, secret_hash, label) VALUES ($1, $2, $3, $4, '\\x00', $5)`, [key.id, site.siteId, userId, key.prefix, label]);
  return key;
}

/**
 * A day of traffic from senders of every kind, one event every five minutes back from `now`
 * (i = 0 .. 287): the LIS integration client's messages (the MLLP half of seedRecentTraffic's,
 * whose rows it marks as the client's), an EHR's FHIR requests with every twentieth errored,
 * and a modality's DICOM instances with every fiftieth failed.
 */
export async function seedSenderTraffic(db: Queryable, site: SiteContext, now: Date): Promise<{ clientId: string; key: { id: string; prefix: string } }> {
  const clientId = await addClient(db, site, 'Lab analyser');
  await db.query(`UPDATE inbound_message SET client_id = $2 WHERE site_id = $1 AND transport = 'mllp'`, [site.siteId, clientId]);
  const key = await addKey(db, site, 'EHR interface');
  const counter = new TrafficCounter(db);
  for (let i = 0; i < 288; i++) {
    const at = now.getTime() - i * 5 * 60_000;
    counter.count({ siteId: site.siteId, senderKind: 'api-key', sender: key.id, surface: 'fhir', measure: 'request', ok: i % 20 !== 0 }, at);
    counter.count({ siteId: site.siteId, senderKind: 'ae-title', sender: 'CT_SCANNER', surface: 'dicom', measure: 'instance', ok: i % 50 !== 0 }, at);
    if (i % 12 === 0) counter.count({ siteId: site.siteId, senderKind: 'ae-title', sender: 'CT_SCANNER', surface: 'dicom', measure: 'association', ok: true }, at);
  }
  await counter.flush();
  return { clientId, key };
}
