// Refused traffic from each surface, as real peers cause it, and who sees it in the admin API:
// an MLLP connection from an address no client admits, an MLLP message whose MSH-4 matches no
// client, a DICOM association to an unknown AE title (dcmtk's echoscu), HTTP requests with an
// unknown and a revoked key. A site's admins see their site's; service admins see the rest.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { connectivitySurface } from '../../src/connectivity/surface.ts';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { createApiKey, revokeApiKey } from '../../src/domain/keys/api-keys.ts';
import { refusedTrafficRecorder } from '../../src/domain/refused-traffic/recorder.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { frame } from '../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../src/hl7v2/mllp/listener.ts';
import { dcmtk, startHarness, type DicomHarness } from '../dicom/support/dicom-harness.ts';
import { RawPeer } from '../hl7v2/mllp/support.ts';
import { buildTestOrigin } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { as, createTestUser, signIn, type Signed } from './support.ts';

let harness: DicomHarness;
let mllp: RunningMllpListener;
let admin: FastifyInstance;
let connectivity: FastifyInstance;
let site: SiteContext;
let siteAdmin: Signed;
let serviceAdmin: Signed;
let otherAdmin: Signed;

before(async () => {
  harness = await startHarness();
  const db = harness.db.database;
  site = await createTestSite(db);
  const other = await createTestSite(db);
  await createIntegrationClient(db, site.siteId, { name: 'Lab', protocol: 'hl7-mllp', allowedIps: '127.0.7.1', sendingFacility: 'MAIN' }, { kind: 'operator' });
  mllp = await startMllpListener(harness.services, { host: '127.0.0.1', port: 0 });
  admin = await buildTestOrigin(adminSurface, db);
  connectivity = await buildTestOrigin(connectivitySurface, db);
  siteAdmin = await signIn(admin, (await createTestUser(db, site, 'site-admin')).email);
  otherAdmin = await signIn(admin, (await createTestUser(db, other, 'site-admin')).email);
  serviceAdmin = await signIn(admin, (await createTestUser(db, null, 'service-admin')).email);
});
after(async () => {
  await mllp.close();
  await admin.close();
  await connectivity.close();
  await harness.stop();
});

interface Entry { site_id: string | null; surface: string; kind: string; remote_address: string; reason: string; details: Record<string, string>; suppressed: number }

async function entries(signed: Signed, url: string): Promise<Entry[]> {
  await refusedTrafficRecorder(harness.db.database).settle();
  const response = await admin.inject(as(signed, { url }));
  assert.equal(response.statusCode, 200, response.body);
  return response.json().entries;
}

test('an MLLP connection from an address no client admits is recorded for service admins', async () => {
  const peer = await RawPeer.open(mllp.port, '127.0.7.99');
  await peer.closedByServer();
  const [entry] = (await entries(serviceAdmin, '/api/refused-traffic?scope=no-site')).filter((e) => e.kind === 'mllp-address-not-admitted');
  assert.equal(entry?.remote_address, '127.0.7.99');
  assert.equal(entry?.site_id, null);
  assert.equal(entry?.reason, 'no integration client admits this address');
  assert.ok(!(await entries(siteAdmin, `/api/sites/${site.siteId}/refused-traffic`)).some((e) => e.kind === 'mllp-address-not-admitted'));
});

test('an MLLP message whose MSH-4 matches no client is recorded for the site whose client admits the address', async () => {
  for (let i = 0; i < 3; i++) {
    const peer = await RawPeer.open(mllp.port, '127.0.7.1');
    peer.write(frame(Buffer.from(`MSH|^~\\&|LAB|ANNEX|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|RT-${i}|P|2.5.1\rPID|1||X1^^^H^MR||Doe^Jo\r`)));
    await peer.next();
    peer.end();
  }
  const mine = (await entries(siteAdmin, `/api/sites/${site.siteId}/refused-traffic?surface=mllp`)).filter((e) => e.kind === 'mllp-sender-not-authorized');
  assert.equal(mine.length, 1, 'one row a minute per address; the others counted');
  assert.equal(mine[0]!.suppressed, 2);
  assert.equal(mine[0]!.details.sending_facility, 'ANNEX');
  assert.equal(mine[0]!.details.control_id, 'RT-0');
  assert.match(mine[0]!.reason, /MSH-4 "ANNEX"/);
  assert.equal((await admin.inject(as(otherAdmin, { url: `/api/sites/${site.siteId}/refused-traffic` }))).statusCode, 404);
});

test('a DICOM association to an unknown called AE title is recorded with both AE titles and why', async () => {
  const result = await dcmtk('echoscu', ['-aet', 'MODALITY7', '-aec', 'NOSUCHSITE', '127.0.0.1', String(harness.listener.port)]);
  assert.notEqual(result.code, 0);
  const [entry] = (await entries(serviceAdmin, '/api/refused-traffic?surface=dicom')).filter((e) => e.kind === 'dicom-called-ae-unknown');
  assert.equal(entry?.details.called_ae_title, 'NOSUCHSITE');
  assert.equal(entry?.details.calling_ae_title, 'MODALITY7');
  assert.equal(entry?.reason, 'called AE title not recognised');
  assert.equal(entry?.remote_address, '127.0.0.1');
});

test('HTTP requests with a revoked key (its site) and an unknown key (no site) are recorded by prefix, never the secret', async () => {
  const db = harness.db.database;
  const user = await createTestUser(db, site, 'clinician');
  const created = await createApiKey(db, { siteId: site.siteId, userId: user.id, label: 'old RIS' }, { kind: 'operator' });
  await revokeApiKey(db, created.apiKey.id, { kind: 'operator' });
  const revoked = await connectivity.inject({ url: '/connectivity/dimse', headers: { 'x-api-key': created.key }, remoteAddress: '127.0.7.20' });
  assert.equal(revoked.statusCode, 401);
  const unknownKey = `cg_000000000000_${'A'.repeat(43)}`;
  assert.equal((await connectivity.inject({ url: '/connectivity/dimse', headers: { 'x-api-key': unknownKey }, remoteAddress: '127.0.7.21' })).statusCode, 401);
  // A missing or malformed header names no key: it is answered 401 and not recorded.
  assert.equal((await connectivity.inject({ url: '/connectivity/dimse', headers: { 'x-api-key': 'garbage' }, remoteAddress: '127.0.7.22' })).statusCode, 401);

  const mine = (await entries(siteAdmin, `/api/sites/${site.siteId}/refused-traffic?surface=http`));
  assert.equal(mine.length, 1);
  assert.equal(mine[0]!.kind, 'http-api-key-revoked');
  assert.equal(mine[0]!.details.key_prefix, created.apiKey.prefix);
  assert.equal(mine[0]!.details.origin, 'connectivity');
  assert.equal(mine[0]!.remote_address, '127.0.7.20');
  const all = await entries(serviceAdmin, '/api/refused-traffic?surface=http');
  const unknown = all.find((e) => e.kind === 'http-api-key-unknown');
  assert.equal(unknown?.details.key_prefix, 'cg_000000000000');
  assert.equal(unknown?.site_id, null);
  assert.ok(!all.some((e) => e.remote_address === '127.0.7.22'));
  const stored = await db.query(`SELECT details::text AS text FROM refused_traffic`);
  // The secret is base64url and may itself hold underscores: all of it after the prefix.
  const secret = /^cg_[0-9a-f]+_(.+)$/.exec(created.key)![1]!;
  assert.equal(secret.length, 43);
  for (const row of stored.rows) assert.ok(!row.text.includes(secret), 'the secret is never stored');
  // The service-wide list is the service admin's.
  assert.equal((await admin.inject(as(siteAdmin, { url: '/api/refused-traffic' }))).statusCode, 403);
});
