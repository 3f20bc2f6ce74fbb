import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { createReport } from '../../src/domain/imaging/reports.ts';
import { createApiKey } from '../../src/domain/keys/api-keys.ts';
import { recordMessage } from '../../src/domain/messages/message-log.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { receivedInstance } from '../domain/imaging/fixtures.ts';
import { as, createTestUser, signIn, type Signed } from './support.ts';

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(adminSurface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

let clientAddresses = 0;

/** Site B with one of everything, so that site A's users can try to reach each object. */
async function populatedSite(): Promise<{ site: SiteContext; userId: string; keyId: string; clientId: string; studyUid: string; reportId: string; messageId: string }> {
  const site = await createTestSite(db.database);
  const clinician = await createTestUser(db.database, site, 'clinician');
  const { apiKey } = await createApiKey(db.database, { siteId: site.siteId, userId: clinician.id, label: 'b' }, { kind: 'operator' });
  const client = await createIntegrationClient(db.database, site.siteId, { name: 'B lab', protocol: 'hl7-mllp', allowedIps: `10.9.9.${++clientAddresses}` }, { kind: 'operator' });
  const instance = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  const report = await createReport(db.database, site, { studyInstanceUid: instance.studyInstanceUid, text: 'B finding', authorUserId: clinician.id });
  const message = await db.database.transaction((tx) =>
    recordMessage(tx, site, {
      protocol: 'hl7v2', transport: 'mllp', sendingApplication: 'LAB', sendingFacility: 'B', controlId: 'B-1', messageType: 'ADT^A01',
      outcome: 'processed', ackCode: 'AA', problems: [], ackText: 'MSH|^~\\&|...\rMSA|AA|B-1\r', raw: Buffer.from('MSH|^~\\&|LAB|B\rPID|||1\r'),
    }),
  );
  return { site, userId: clinician.id, keyId: apiKey.id, clientId: client.id, studyUid: instance.studyInstanceUid, reportId: report.id, messageId: message.id };
}

async function siteAdminOf(site: SiteContext): Promise<Signed> {
  return signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
}

test('another site and every object in it answer 404 to a site admin, exactly like ids that do not exist', async () => {
  const a = await createTestSite(db.database);
  const b = await populatedSite();
  const admin = await siteAdminOf(a);
  const B = `/api/sites/${b.site.siteId}`;
  const A = `/api/sites/${a.siteId}`;
  const requests: [string, string, unknown?][] = [
    ['GET', B],
    ['PATCH', B, { name: 'taken over' }],
    ['GET', `${B}/users`],
    ['POST', `${B}/users`, { email: 'intruder@example.test', role: 'site-admin' }],
    ['GET', `${B}/keys`],
    ['POST', `${B}/keys`, { user_id: b.userId }],
    ['GET', `${B}/clients`],
    ['GET', `${B}/studies`],
    ['GET', `${B}/messages`],
    ['GET', `${B}/connectivity`],
    ['GET', `${B}/audit`],
    // B's objects through A's URLs.
    ['PATCH', `${A}/users/${b.userId}`, { active: false }],
    ['POST', `${A}/users/${b.userId}/password`, {}],
    ['POST', `${A}/keys/${b.keyId}/revoke`, {}],
    ['PATCH', `${A}/clients/${b.clientId}`, { enabled: false }],
    ['GET', `${A}/studies/${b.studyUid}`],
    ['GET', `${A}/messages/${b.messageId}`],
  ];
  for (const [method, url, payload] of requests) {
    const response = await app.inject(as(admin, { method: method as 'GET', url, ...(payload !== undefined ? { payload: payload as object } : {}) }));
    assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
    assert.equal(response.json().error.code, 'not-found');
  }
  const missing = await app.inject(as(admin, { url: '/api/sites/00000000-0000-4000-8000-000000000000' }));
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(missing.json(), (await app.inject(as(admin, { url: B }))).json(), 'another site reads exactly like a missing one');
  const sites = await app.inject(as(admin, { url: '/api/sites' }));
  assert.deepEqual(sites.json().sites.map((s: { id: string }) => s.id), [a.siteId]);
  // Nothing of B changed.
  const { rows } = await db.database.query(
    `SELECT (SELECT revoked_at FROM api_key WHERE id = $1) AS revoked, (SELECT active FROM app_user WHERE id = $2) AS active,
            (SELECT enabled FROM integration_client WHERE id = $3) AS enabled, (SELECT name FROM site WHERE id = $4) AS name`,
    [b.keyId, b.userId, b.clientId, b.site.siteId],
  );
  assert.deepEqual(rows[0], { revoked: null, active: true, enabled: true, name: b.site.siteName });
});

test('a clinician of a site B cannot write on site B\'s report from site A', async () => {
  const a = await createTestSite(db.database);
  const b = await populatedSite();
  const clinician = await signIn(app, (await createTestUser(db.database, a, 'clinician')).email);
  const A = `/api/sites/${a.siteId}`;
  for (const [method, url, payload] of [
    ['PUT', `${A}/reports/${b.reportId}`, { text: 'overwritten', version: 1 }],
    ['POST', `${A}/reports/${b.reportId}/complete`, { version: 1 }],
    ['POST', `${A}/studies/${b.studyUid}/reports`, { text: 'x' }],
    ['GET', `/api/sites/${b.site.siteId}/studies`],
  ] as const) {
    const response = await app.inject(as(clinician, { method, url, payload }));
    assert.equal(response.statusCode, 404, `${method} ${url}: ${response.body}`);
  }
  const { rows } = await db.database.query('SELECT text, status FROM imaging_report WHERE site_id = $1 AND id = $2', [b.site.siteId, b.reportId]);
  assert.deepEqual(rows[0], { text: 'B finding', status: 'draft' });
});

test('a clinician sees the worklist but not the administration areas of their own site (403)', async () => {
  const site = await createTestSite(db.database);
  const clinician = await signIn(app, (await createTestUser(db.database, site, 'clinician')).email);
  const S = `/api/sites/${site.siteId}`;
  assert.equal((await app.inject(as(clinician, { url: `${S}/studies` }))).statusCode, 200);
  assert.equal((await app.inject(as(clinician, { url: S }))).statusCode, 200, 'the site itself (its name) is visible');
  for (const [method, url, payload] of [
    ['GET', `${S}/keys`],
    ['POST', `${S}/keys`, { user_id: clinician.userId }],
    ['GET', `${S}/users`],
    ['GET', `${S}/clients`],
    ['GET', `${S}/messages`],
    ['GET', `${S}/connectivity`],
    ['GET', `${S}/audit`],
    ['PATCH', S, { name: 'renamed' }],
    ['POST', '/api/sites', { name: 'new', ae_title: 'NEWSITE' }],
    ['GET', '/api/audit'],
  ] as const) {
    const response = await app.inject(as(clinician, { method, url, ...(payload ? { payload } : {}) }));
    assert.equal(response.statusCode, 403, `${method} ${url}: ${response.body}`);
    assert.equal(response.json().error.code, 'forbidden');
  }
  const { rows } = await db.database.query('SELECT count(*)::int AS n FROM api_key WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0]!.n, 0);
});

test('admins read the worklist but only clinicians write reports', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  const siteAdmin = await siteAdminOf(site);
  const serviceAdmin = await signIn(app, (await createTestUser(db.database, null, 'service-admin')).email);
  for (const signed of [siteAdmin, serviceAdmin]) {
    assert.equal((await app.inject(as(signed, { url: `/api/sites/${site.siteId}/studies/${instance.studyInstanceUid}` }))).statusCode, 200);
    const write = await app.inject(as(signed, { method: 'POST', url: `/api/sites/${site.siteId}/studies/${instance.studyInstanceUid}/reports`, payload: { text: 'x' } }));
    assert.equal(write.statusCode, 403);
  }
});

test('a site admin cannot create service admins or create sites; a service admin reaches every site', async () => {
  const a = await createTestSite(db.database);
  const b = await createTestSite(db.database);
  const admin = await siteAdminOf(a);
  const escalate = await app.inject(as(admin, { method: 'POST', url: `/api/sites/${a.siteId}/users`, payload: { email: 'root@example.test', role: 'service-admin' } }));
  assert.equal(escalate.statusCode, 400);
  assert.equal(escalate.json().error.fields[0].field, 'role');
  assert.equal((await app.inject(as(admin, { method: 'POST', url: '/api/sites', payload: { name: 'x', ae_title: 'X' } }))).statusCode, 403);
  const serviceAdmin = await signIn(app, (await createTestUser(db.database, null, 'service-admin')).email);
  for (const site of [a, b]) {
    for (const area of ['users', 'keys', 'clients', 'studies', 'messages', 'connectivity', 'audit']) {
      const response = await app.inject(as(serviceAdmin, { url: `/api/sites/${site.siteId}/${area}` }));
      assert.equal(response.statusCode, 200, `${area}: ${response.body}`);
    }
  }
  const all = await app.inject(as(serviceAdmin, { url: '/api/sites' }));
  const ids = all.json().sites.map((s: { id: string }) => s.id);
  assert.ok(ids.includes(a.siteId) && ids.includes(b.siteId));
});

test('a role change applies to the next request of an existing session', async () => {
  const site = await createTestSite(db.database);
  const admin = await siteAdminOf(site);
  const other = await createTestUser(db.database, site, 'site-admin');
  const otherSigned = await signIn(app, other.email);
  assert.equal((await app.inject(as(otherSigned, { url: `/api/sites/${site.siteId}/keys` }))).statusCode, 200);
  const demote = await app.inject(as(admin, { method: 'PATCH', url: `/api/sites/${site.siteId}/users/${other.id}`, payload: { role: 'clinician' } }));
  assert.equal(demote.statusCode, 200);
  assert.equal((await app.inject(as(otherSigned, { url: `/api/sites/${site.siteId}/keys` }))).statusCode, 403);
});
