import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { authenticateApiKey } from '../../src/domain/keys/api-keys.ts';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { recordMessage } from '../../src/domain/messages/message-log.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { receivedInstance, uid } from '../domain/imaging/fixtures.ts';
import { as, createTestUser, signIn, testPassword, uniqueEmail, type Signed } from './support.ts';

let db: TestDatabase;
let app: FastifyInstance;
let service: Signed;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(adminSurface, db.database, { CG_DICOM_PUBLIC_HOST: 'pacs.example.org', CG_DICOM_PUBLIC_PORT: '104', CG_DICOM_PUBLIC_IP: '192.0.2.10' });
  service = await signIn(app, (await createTestUser(db.database, null, 'service-admin')).email);
});
after(async () => {
  await app.close();
  await db.drop();
});

function aeTitle(): string {
  return `AE${Math.random().toString(36).slice(2, 12).toUpperCase()}`;
}

test('sites: create, conflicting and invalid values are named by field, edit settings, audit records who', async () => {
  const name = `Radiology ${Math.random().toString(36).slice(2, 8)}`;
  const ae = aeTitle();
  const created = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { name, ae_title: ` ${ae} `, mllp_allow_any_ip: true } }));
  assert.equal(created.statusCode, 201, created.body);
  const site = created.json();
  assert.equal(site.ae_title, ae);
  assert.equal(site.mllp_allow_any_ip, true);
  assert.equal(site.patient_put_creates, false);

  const duplicate = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { name: `${name} two`, ae_title: ae } }));
  assert.equal(duplicate.statusCode, 409);
  assert.deepEqual(duplicate.json().error.fields, [{ field: 'ae_title', message: 'another site already uses this DICOM AE title' }]);
  const sameName = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { name: name.toUpperCase(), ae_title: aeTitle() } }));
  assert.equal(sameName.statusCode, 409);
  assert.equal(sameName.json().error.fields[0].field, 'name');
  for (const bad of ['BACK\\SLASH', 'THIS_TITLE_IS_TOO_LONG', '   ', 'ÄRZTE']) {
    const response = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { name: `x ${bad}`, ae_title: bad } }));
    assert.equal(response.statusCode, 400, bad);
    assert.equal(response.json().error.fields[0].field, 'ae_title');
  }
  const missing = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { ae_title: aeTitle() } }));
  assert.deepEqual(missing.json().error.fields, [{ field: 'name', message: 'this field is required' }]);
  const unknownField = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { name: 'y', ae_title: aeTitle(), site_id: 'x' } }));
  assert.equal(unknownField.statusCode, 400);

  const admin = await signIn(app, (await createTestUser(db.database, { siteId: site.id } as never, 'site-admin')).email);
  const renamed = await app.inject(as(admin, { method: 'PATCH', url: `/api/sites/${site.id}`, payload: { name: `${name} (main)`, patient_put_creates: true } }));
  assert.equal(renamed.statusCode, 200, renamed.body);
  assert.equal(renamed.json().name, `${name} (main)`);
  assert.equal(renamed.json().ae_title, ae);
  assert.equal(renamed.json().patient_put_creates, true);

  const audit = await app.inject(as(admin, { url: `/api/sites/${site.id}/audit` }));
  const actions = audit.json().events.map((e: { action: string; actor_email: string | null }) => [e.action, e.actor_email !== null]);
  assert.deepEqual(actions.slice(0, 2), [['site.updated', true], ['user.created', false]]);
  assert.ok(actions.some(([action]: [string]) => action === 'site.created'));
});

test('users: generated password shown once, role change, reset, deactivate, and no self-lockout', async () => {
  const site = await createTestSite(db.database);
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  const email = uniqueEmail('nurse');
  const created = await app.inject(as(admin, { method: 'POST', url: `${S}/users`, payload: { email, role: 'clinician' } }));
  assert.equal(created.statusCode, 201, created.body);
  const generated = created.json().generated_password;
  assert.ok(generated.length >= 20);
  const user = created.json().user;
  const theirSession = await signIn(app, email, generated);
  const list = await app.inject(as(admin, { url: `${S}/users` }));
  assert.ok(!list.body.includes(generated), 'the password is never listed');
  assert.equal(list.json().users.length, 2);

  const badEmail = await app.inject(as(admin, { method: 'POST', url: `${S}/users`, payload: { email: 'not an address', role: 'clinician' } }));
  assert.deepEqual(badEmail.json().error.fields, [{ field: 'email', message: 'the e-mail address is not valid' }]);
  const weak = await app.inject(as(admin, { method: 'POST', url: `${S}/users`, payload: { email: uniqueEmail(), role: 'clinician', password: 'short' } }));
  assert.equal(weak.json().error.fields[0].field, 'password');
  const dup = await app.inject(as(admin, { method: 'POST', url: `${S}/users`, payload: { email: email.toUpperCase(), role: 'clinician' } }));
  assert.equal(dup.statusCode, 409);

  const promoted = await app.inject(as(admin, { method: 'PATCH', url: `${S}/users/${user.id}`, payload: { role: 'site-admin' } }));
  assert.equal(promoted.json().role, 'site-admin');
  const reset = await app.inject(as(admin, { method: 'POST', url: `${S}/users/${user.id}/password`, payload: {} }));
  assert.equal(reset.statusCode, 200);
  assert.equal((await app.inject({ url: '/api/session', headers: { cookie: theirSession.cookie } })).json().user, null, 'a reset ends their sessions');
  await signIn(app, email, reset.json().generated_password);
  const setOne = await app.inject(as(admin, { method: 'POST', url: `${S}/users/${user.id}/password`, payload: { password: 'chosen by the admin' } }));
  assert.deepEqual(setOne.json(), {});
  await signIn(app, email, 'chosen by the admin');

  const deactivated = await app.inject(as(admin, { method: 'PATCH', url: `${S}/users/${user.id}`, payload: { active: false } }));
  assert.equal(deactivated.json().active, false);
  const refused = await app.inject({ method: 'POST', url: '/api/session', payload: { email, password: 'chosen by the admin' } });
  assert.equal(refused.statusCode, 401);

  const selfLock = await app.inject(as(admin, { method: 'PATCH', url: `${S}/users/${admin.userId}`, payload: { active: false } }));
  assert.equal(selfLock.statusCode, 422);
  assert.equal(selfLock.json().error.fields[0].field, 'active');
  const selfDemote = await app.inject(as(admin, { method: 'PATCH', url: `${S}/users/${admin.userId}`, payload: { role: 'clinician' } }));
  assert.equal(selfDemote.statusCode, 422);
});

test('API keys: the key is returned once, lists carry only the prefix, revocation stops it at once', async () => {
  const site = await createTestSite(db.database);
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  const created = await app.inject(as(admin, { method: 'POST', url: `${S}/keys`, payload: { user_id: admin.userId, label: 'EHR' } }));
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.headers['cache-control'], 'no-store');
  const { key, api_key: apiKey } = created.json();
  assert.match(key, /^cg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  assert.ok(key.startsWith(apiKey.prefix));
  assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  const list = await app.inject(as(admin, { url: `${S}/keys` }));
  // The secret is everything after cg_<prefix>_; base64url may itself contain '_', so not a split.
  assert.ok(!list.body.includes(key.slice('cg_'.length + 12 + 1)), 'the secret is never listed');
  assert.deepEqual(Object.keys(list.json().keys[0]).sort(), ['created_at', 'id', 'label', 'last_used_at', 'prefix', 'revoked_at', 'user_email', 'user_id']);
  assert.equal(list.json().keys[0].user_email.includes('@'), true);

  const otherSite = await createTestSite(db.database);
  const foreignOwner = await createTestUser(db.database, otherSite, 'clinician');
  // Another site's user answers exactly like a user that does not exist.
  const foreign = await app.inject(as(admin, { method: 'POST', url: `${S}/keys`, payload: { user_id: foreignOwner.id } }));
  const nobody = await app.inject(as(admin, { method: 'POST', url: `${S}/keys`, payload: { user_id: '00000000-0000-4000-8000-000000000000' } }));
  assert.equal(nobody.statusCode, 404);
  assert.equal(foreign.statusCode, 404);
  const withoutRequestId = (body: { error: Record<string, unknown> }) => ({ ...body.error, request_id: undefined });
  assert.deepEqual(withoutRequestId(foreign.json()), withoutRequestId(nobody.json()));

  const revoked = await app.inject(as(admin, { method: 'POST', url: `${S}/keys/${apiKey.id}/revoke`, payload: {} }));
  assert.equal(revoked.statusCode, 200);
  assert.ok(revoked.json().revoked_at);
  assert.deepEqual(await authenticateApiKey(db.database, key), { ok: false, reason: 'revoked' });
  const again = await app.inject(as(admin, { method: 'POST', url: `${S}/keys/${apiKey.id}/revoke`, payload: {} }));
  assert.equal(again.json().revoked_at, revoked.json().revoked_at, 'revoking twice keeps the first time');
  const garbage = await app.inject(as(admin, { method: 'POST', url: `${S}/keys/not-a-uuid/revoke`, payload: {} }));
  assert.equal(garbage.statusCode, 404);
});

test('integration clients: IP and CIDR validation by field, "*" only where the policy permits, edit and disable', async () => {
  const site = await createTestSite(db.database);
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  for (const bad of [['10.0.0.300'], ['10.0.0.0/33'], ['fe80::1::2'], ['host.example.org'], []]) {
    const response = await app.inject(as(admin, { method: 'POST', url: `${S}/clients`, payload: { name: 'Lab', allowed_ips: bad } }));
    assert.equal(response.statusCode, 400, JSON.stringify(bad));
    assert.equal(response.json().error.fields[0].field, 'allowed_ips');
  }
  const any = await app.inject(as(admin, { method: 'POST', url: `${S}/clients`, payload: { name: 'Lab', allowed_ips: ['*'] } }));
  assert.equal(any.statusCode, 422);
  assert.equal(any.json().error.fields[0].field, 'allowed_ips');
  const created = await app.inject(as(admin, {
    method: 'POST',
    url: `${S}/clients`,
    payload: { name: 'Lab', allowed_ips: '10.1.2.3, 10.20.0.0/16\n2001:db8::/32', sending_application: 'LIS', sending_facility: 'MAIN' },
  }));
  assert.equal(created.statusCode, 201, created.body);
  const client = created.json();
  assert.deepEqual(client.allowed_ips, ['10.1.2.3', '10.20.0.0/16', '2001:db8::/32']);
  assert.equal(client.protocol, 'hl7-mllp');
  assert.equal(client.enabled, true);
  const badProtocol = await app.inject(as(admin, { method: 'POST', url: `${S}/clients`, payload: { name: 'Other', protocol: 'ftp', allowed_ips: ['10.0.0.1'] } }));
  assert.equal(badProtocol.json().error.fields[0].field, 'protocol');
  const dupName = await app.inject(as(admin, { method: 'POST', url: `${S}/clients`, payload: { name: 'LAB', allowed_ips: ['10.0.0.1'] } }));
  assert.equal(dupName.statusCode, 409);
  const edited = await app.inject(as(admin, { method: 'PATCH', url: `${S}/clients/${client.id}`, payload: { sending_facility: null, enabled: false } }));
  assert.equal(edited.statusCode, 200);
  assert.equal(edited.json().sending_facility, null);
  assert.equal(edited.json().enabled, false);
  assert.equal(edited.json().sending_application, 'LIS');
});

test('worklist: filters, paging and bad filters named by field; study detail', async () => {
  const site = await createTestSite(db.database);
  const clinician = await signIn(app, (await createTestUser(db.database, site, 'clinician')).email);
  const S = `/api/sites/${site.siteId}`;
  const ct = receivedInstance({ modality: 'CT', studyDate: '20240105', patientName: 'Doe^Jane', patientId: 'P-1', studyDescription: 'CT chest' });
  await db.database.transaction((tx) => indexInstance(tx, site, ct));
  await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ studyInstanceUid: ct.studyInstanceUid, seriesInstanceUid: ct.seriesInstanceUid, modality: 'CT' })));
  for (let i = 0; i < 3; i++) await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ modality: 'MR', studyDate: `2024020${i + 1}` })));
  const all = await app.inject(as(clinician, { url: `${S}/studies?limit=2` }));
  assert.equal(all.statusCode, 200);
  assert.equal(all.json().total, 4);
  assert.equal(all.json().studies.length, 2);
  const second = await app.inject(as(clinician, { url: `${S}/studies?limit=2&offset=2` }));
  assert.equal(second.json().studies.length, 2);
  const byModality = await app.inject(as(clinician, { url: `${S}/studies?modality=CT` }));
  assert.equal(byModality.json().total, 1);
  const study = byModality.json().studies[0];
  assert.equal(study.patient_name, 'Doe, Jane');
  assert.equal(study.instance_count, 2);
  assert.equal(study.series_count, 1);
  assert.equal(study.report_status, null);
  assert.equal((await app.inject(as(clinician, { url: `${S}/studies?patient=doe` }))).json().total, 1);
  assert.equal((await app.inject(as(clinician, { url: `${S}/studies?from=2024-02-02&to=2024-02-03` }))).json().total, 2);
  assert.equal((await app.inject(as(clinician, { url: `${S}/studies?report_status=none` }))).json().total, 4);
  const badDate = await app.inject(as(clinician, { url: `${S}/studies?from=yesterday` }));
  assert.equal(badDate.statusCode, 400);
  assert.equal(badDate.json().error.fields[0].field, 'from');
  const reversed = await app.inject(as(clinician, { url: `${S}/studies?from=2024-03-01&to=2024-01-01` }));
  assert.equal(reversed.statusCode, 400);
  const badStatus = await app.inject(as(clinician, { url: `${S}/studies?step_status=DONE` }));
  assert.equal(badStatus.statusCode, 400);
  assert.equal(badStatus.json().error.fields[0].field, 'step_status');
  const badLimit = await app.inject(as(clinician, { url: `${S}/studies?limit=100000` }));
  assert.equal(badLimit.statusCode, 400);

  const detail = await app.inject(as(clinician, { url: `${S}/studies/${ct.studyInstanceUid}` }));
  assert.equal(detail.statusCode, 200);
  assert.equal(detail.json().series.length, 1);
  assert.equal(detail.json().series[0].instance_count, 2);
  assert.deepEqual(detail.json().procedure_steps, []);
  assert.deepEqual(detail.json().reports, []);
  assert.equal((await app.inject(as(clinician, { url: `${S}/studies/${uid()}` }))).statusCode, 404);
});

test('reports: draft, save with the version, stale saves refused, complete (signed by me), then frozen', async () => {
  const site = await createTestSite(db.database);
  const me = await createTestUser(db.database, site, 'clinician');
  const clinician = await signIn(app, me.email);
  const S = `/api/sites/${site.siteId}`;
  const instance = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  const draft = await app.inject(as(clinician, { method: 'POST', url: `${S}/studies/${instance.studyInstanceUid}/reports`, payload: { text: 'Findings: ' } }));
  assert.equal(draft.statusCode, 201, draft.body);
  assert.equal(draft.json().status, 'draft');
  assert.equal(draft.json().author_email, me.email);
  const id = draft.json().id;
  const saved = await app.inject(as(clinician, { method: 'PUT', url: `${S}/reports/${id}`, payload: { text: 'Findings: normal.', version: 1 } }));
  assert.equal(saved.statusCode, 200);
  assert.equal(saved.json().version, 2);
  const stale = await app.inject(as(clinician, { method: 'PUT', url: `${S}/reports/${id}`, payload: { text: 'older editor', version: 1 } }));
  assert.equal(stale.statusCode, 412);
  const emptyFinal = await app.inject(as(clinician, { method: 'POST', url: `${S}/reports/${id}/complete`, payload: { text: '  ', version: 2 } }));
  assert.equal(emptyFinal.statusCode, 400);
  assert.equal(emptyFinal.json().error.fields[0].field, 'text');
  const done = await app.inject(as(clinician, { method: 'POST', url: `${S}/reports/${id}/complete`, payload: { text: 'Findings: normal. Impression: no acute finding.', version: 2 } }));
  assert.equal(done.statusCode, 200, done.body);
  assert.equal(done.json().status, 'completed');
  assert.equal(done.json().author_user_id, me.id);
  assert.ok(done.json().completed_at);
  const frozen = await app.inject(as(clinician, { method: 'PUT', url: `${S}/reports/${id}`, payload: { text: 'changed', version: 3 } }));
  assert.equal(frozen.statusCode, 409);
  const tooLong = await app.inject(as(clinician, { method: 'POST', url: `${S}/studies/${instance.studyInstanceUid}/reports`, payload: { text: 'x'.repeat(100_001) } }));
  assert.equal(tooLong.statusCode, 400);
  const noStudy = await app.inject(as(clinician, { method: 'POST', url: `${S}/studies/${uid()}/reports`, payload: { text: 'x' } }));
  assert.equal(noStudy.statusCode, 404);
  const detail = await app.inject(as(clinician, { url: `${S}/studies/${instance.studyInstanceUid}` }));
  assert.equal(detail.json().report_status, 'completed');
  assert.equal(detail.json().reports[0].text, 'Findings: normal. Impression: no acute finding.');
});

test('messages: the log with ACK codes and problems, paging, and a message with its raw text', async () => {
  const site = await createTestSite(db.database);
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  const empty = await app.inject(as(admin, { url: `${S}/messages` }));
  assert.deepEqual(empty.json(), { messages: [], total: 0, total_exact: true });
  for (let i = 1; i <= 3; i++) {
    await db.database.transaction((tx) =>
      recordMessage(tx, site, {
        protocol: 'hl7v2', transport: i === 3 ? 'http' : 'mllp', sendingApplication: 'LIS', sendingFacility: 'MAIN', controlId: `C${i}`,
        messageType: 'ORU^R01', outcome: i === 2 ? 'error' : 'processed', ackCode: i === 2 ? 'AE' : 'AA',
        problems: i === 2 ? [{ severity: 'error', code: '101', location: 'PID-3', message: 'PID-3 is required' }] : [],
        ackText: `MSH|^~\\&|GW\rMSA|${i === 2 ? 'AE' : 'AA'}|C${i}\r`, raw: Buffer.from(`MSH|^~\\&|LIS|MAIN\rPID|||P${i}||Müller^Ann\r`), remoteAddress: '10.1.2.3',
      }),
    );
  }
  const first = await app.inject(as(admin, { url: `${S}/messages?limit=2` }));
  assert.equal(first.json().messages.length, 2);
  assert.equal(first.json().messages[0].control_id, 'C3');
  assert.equal(first.json().messages[1].ack_code, 'AE');
  assert.equal(first.json().messages[1].problems[0].message, 'PID-3 is required');
  assert.equal(first.json().total, 3);
  const next = await app.inject(as(admin, { url: `${S}/messages?limit=2&after=${first.json().next}` }));
  assert.deepEqual(next.json().messages.map((m: { control_id: string }) => m.control_id), ['C1']);
  assert.equal(next.json().next, undefined);
  const one = await app.inject(as(admin, { url: `${S}/messages/${first.json().messages[1].id}` }));
  assert.equal(one.json().raw, 'MSH|^~\\&|LIS|MAIN\nPID|||P2||Müller^Ann\n');
  assert.equal(one.json().ack, 'MSH|^~\\&|GW\nMSA|AE|C2\n');
  assert.equal((await app.inject(as(admin, { url: `${S}/messages?after=abc` }))).statusCode, 400);
});

test('connectivity: the public DICOM address from the configuration and the site\'s AE title', async () => {
  const site = await createTestSite(db.database);
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const response = await app.inject(as(admin, { url: `/api/sites/${site.siteId}/connectivity` }));
  assert.deepEqual(response.json(), {
    dicom: { host: 'pacs.example.org', port: 104, ip: '192.0.2.10', called_ae_title: site.aeTitle, listening: true },
    mllp: { port: 2575, listening: true },
  });
});

test('the service audit log is the service admin\'s; entries name the acting user', async () => {
  const site = await createTestSite(db.database);
  const created = await app.inject(as(service, { method: 'POST', url: `/api/sites/${site.siteId}/users`, payload: { email: uniqueEmail(), role: 'clinician', password: testPassword } }));
  assert.equal(created.statusCode, 201);
  const audit = await app.inject(as(service, { url: '/api/audit?limit=5' }));
  const event = audit.json().events.find((e: { target_id: string }) => e.target_id === created.json().user.id);
  assert.equal(event.action, 'user.created');
  assert.equal(event.actor, `user:${service.userId}`);
  assert.ok(event.actor_email.includes('@'));
  assert.equal(audit.json().events.length, 5);
  const older = await app.inject(as(service, { url: `/api/audit?limit=5&before=${audit.json().next_before}` }));
  assert.equal(older.statusCode, 200);
  assert.ok(Number(older.json().events[0].id) < Number(audit.json().events[4].id));
});

test('service admins: only service admins list, add, reset and deactivate them; site users are not reachable here', async () => {
  const email = uniqueEmail('ops');
  const created = await app.inject(as(service, { method: 'POST', url: '/api/service-admins', payload: { email } }));
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().user.role, 'service-admin');
  assert.equal(created.json().user.site_id, null);
  const theirs = await signIn(app, email, created.json().generated_password);
  const list = await app.inject(as(theirs, { url: '/api/service-admins' }));
  assert.ok(list.json().users.every((u: { role: string }) => u.role === 'service-admin'));
  assert.ok(list.json().users.some((u: { email: string }) => u.email === email));

  const site = await createTestSite(db.database);
  const siteAdmin = await createTestUser(db.database, site, 'site-admin');
  const siteAdminSigned = await signIn(app, siteAdmin.email);
  for (const [method, url, payload] of [
    ['GET', '/api/service-admins'],
    ['POST', '/api/service-admins', { email: uniqueEmail() }],
    ['PATCH', `/api/service-admins/${service.userId}`, { active: false }],
  ] as const) {
    assert.equal((await app.inject(as(siteAdminSigned, { method, url, ...(payload ? { payload } : {}) }))).statusCode, 403, `${method} ${url}`);
  }
  const notServiceAdmin = await app.inject(as(service, { method: 'PATCH', url: `/api/service-admins/${siteAdmin.id}`, payload: { active: false } }));
  assert.equal(notServiceAdmin.statusCode, 404, 'a site user is not managed here');
  const self = await app.inject(as(theirs, { method: 'PATCH', url: `/api/service-admins/${theirs.userId}`, payload: { active: false } }));
  assert.equal(self.statusCode, 422);

  const reset = await app.inject(as(service, { method: 'POST', url: `/api/service-admins/${theirs.userId}/password`, payload: {} }));
  assert.equal(reset.statusCode, 200);
  assert.equal((await app.inject({ url: '/api/session', headers: { cookie: theirs.cookie } })).json().user, null, 'their sessions ended');
  const deactivated = await app.inject(as(service, { method: 'PATCH', url: `/api/service-admins/${theirs.userId}`, payload: { active: false } }));
  assert.equal(deactivated.json().active, false);
  const refused = await app.inject({ method: 'POST', url: '/api/session', payload: { email, password: reset.json().generated_password } });
  assert.equal(refused.statusCode, 401);
});

test('time zones: a site\'s and a client\'s are set, canonicalised, refused by field when not IANA names, and cleared', async () => {
  const created = await app.inject(as(service, { method: 'POST', url: '/api/sites', payload: { name: `Zoned ${aeTitle()}`, ae_title: aeTitle(), time_zone: 'europe/london' } }));
  assert.equal(created.statusCode, 201, created.body);
  const site = created.json();
  assert.equal(site.time_zone, 'Europe/London');
  const admin = await signIn(app, (await createTestUser(db.database, { siteId: site.id } as never, 'site-admin')).email);
  for (const bad of ['Mars/Olympus_Mons', '+02:00', 'x'.repeat(65)]) {
    const response = await app.inject(as(admin, { method: 'PATCH', url: `/api/sites/${site.id}`, payload: { time_zone: bad } }));
    assert.equal(response.statusCode, 400, bad);
    assert.equal(response.json().error.fields[0].field, 'time_zone', bad);
  }
  const changed = await app.inject(as(admin, { method: 'PATCH', url: `/api/sites/${site.id}`, payload: { time_zone: 'America/Chicago' } }));
  assert.equal(changed.json().time_zone, 'America/Chicago');
  const S = `/api/sites/${site.id}`;
  const badClient = await app.inject(as(admin, { method: 'POST', url: `${S}/clients`, payload: { name: 'Lab', allowed_ips: ['10.0.0.1'], time_zone: 'Europe/Londres' } }));
  assert.equal(badClient.statusCode, 400);
  assert.deepEqual(badClient.json().error.fields.map((f: { field: string }) => f.field), ['time_zone']);
  const client = await app.inject(as(admin, { method: 'POST', url: `${S}/clients`, payload: { name: 'Lab', allowed_ips: ['10.0.0.1'], time_zone: 'US/Pacific' } }));
  assert.equal(client.statusCode, 201, client.body);
  assert.equal(client.json().time_zone, 'America/Los_Angeles');
  const cleared = await app.inject(as(admin, { method: 'PATCH', url: `${S}/clients/${client.json().id}`, payload: { time_zone: '' } }));
  assert.equal(cleared.json().time_zone, null);
  const siteCleared = await app.inject(as(admin, { method: 'PATCH', url: `/api/sites/${site.id}`, payload: { time_zone: null } }));
  assert.equal(siteCleared.json().time_zone, null);
});
