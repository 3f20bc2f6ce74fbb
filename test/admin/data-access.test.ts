// Issue 26 point 14 in the administration app: clinical views are recorded by user, and a site's
// administrators search the site's data access log by patient, user, key and time; retention
// follows the site's setting, which only a service administrator changes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { recordMessage } from '../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { runCliJson } from '../support/cli.ts';
import { createTestSite } from '../support/sites.ts';
import { receivedInstance } from '../domain/imaging/fixtures.ts';
import { adminOriginForFile, as, createTestUser, signIn } from './support.ts';

const origin = adminOriginForFile();

const settled = () => dataAccessRecorder(origin.db.database).settled();

interface Entry { user_id: string; user_email: string; surface: string; interaction: string; resource_type: string; resource_ids: string[]; patient_ids: string[]; remote_address: string }

test('worklist, study and message views are recorded by user, and the site\'s admins search them by patient, user and time', async () => {
  const site = await createTestSite(origin.db.database);
  const clinicianUser = await createTestUser(origin.db.database, site, 'clinician');
  const clinician = await signIn(origin.app, clinicianUser.email);
  const admin = await signIn(origin.app, (await createTestUser(origin.db.database, site, 'site-admin')).email);
  const { patient } = await resourceStore(origin.db.database, site).findOrCreatePatient('DA-P1', () => ({ resourceType: 'Patient', identifier: [{ value: 'DA-P1' }], name: [{ text: 'Ann Audit' }] }));
  const instance = receivedInstance({ patientId: 'DA-P1', patientName: 'Audit^Ann' });
  await origin.db.database.transaction((tx) => indexInstance(tx, site, instance));
  const message = await origin.db.database.transaction((tx) =>
    recordMessage(tx, site, {
      protocol: 'hl7v2', transport: 'mllp', sendingApplication: 'LAB', sendingFacility: 'A', controlId: 'DA-1', messageType: 'ADT^A01',
      outcome: 'processed', ackCode: 'AA', problems: [], ackText: 'MSH|^~\\&|...\rMSA|AA|DA-1\r', raw: Buffer.from('MSH|^~\\&|LAB|A\rPID|||DA-P1\r'),
    }),
  );
  const S = `/api/sites/${site.siteId}`;
  assert.equal((await origin.app.inject(as(clinician, { url: `${S}/studies?patient=DA-P1` }))).statusCode, 200);
  assert.equal((await origin.app.inject(as(clinician, { url: `${S}/studies/${instance.studyInstanceUid}` }))).statusCode, 200);
  assert.equal((await origin.app.inject(as(admin, { url: `${S}/messages/${message.id}` }))).statusCode, 200);
  await settled();

  const byPatient = await origin.app.inject(as(admin, { url: `${S}/data-access?patient=${patient.id}` }));
  assert.equal(byPatient.statusCode, 200, byPatient.body);
  const entries = byPatient.json().entries as Entry[];
  assert.deepEqual(entries.map((e) => [e.interaction, e.resource_type, e.resource_ids]), [
    ['view', 'Study', [instance.studyInstanceUid]],
    ['search', 'Study', [instance.studyInstanceUid]],
  ]);
  for (const entry of entries) {
    assert.equal(entry.user_id, clinicianUser.id);
    assert.equal(entry.user_email, clinicianUser.email);
    assert.equal(entry.surface, 'admin');
    assert.deepEqual(entry.patient_ids, [patient.id]);
  }
  const byUser = (await origin.app.inject(as(admin, { url: `${S}/data-access?user=${encodeURIComponent(clinicianUser.email)}` }))).json().entries as Entry[];
  assert.equal(byUser.length, 2);
  const all = (await origin.app.inject(as(admin, { url: `${S}/data-access?limit=10` }))).json().entries as Entry[];
  assert.deepEqual(all.map((e) => `${e.interaction} ${e.resource_type}`), ['view Message', 'view Study', 'search Study']);
  const future = await origin.app.inject(as(admin, { url: `${S}/data-access?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}` }));
  assert.deepEqual(future.json().entries, []);
  const badTime = await origin.app.inject(as(admin, { url: `${S}/data-access?since=yesterday` }));
  assert.equal(badTime.statusCode, 400);

  // The CLI reads the same log.
  const env = { CG_DATABASE_URL: origin.db.connectionString };
  const listed = await runCliJson<{ entries: { patient_ids: string[]; interaction: string }[] }>(['audit', 'list', '--site', site.siteId, '--patient', patient.id!], env);
  assert.deepEqual(listed.entries.map((e) => e.interaction), ['view', 'search']);
  const byCliUser = await runCliJson<{ entries: unknown[] }>(['audit', 'list', '--site', site.siteName, '--user', clinicianUser.email, '--since', '2020-01-01'], env);
  assert.equal(byCliUser.entries.length, 2);
});

test('only the site\'s administrators read its data access log: a clinician is refused, another site\'s admin gets 404', async () => {
  const site = await createTestSite(origin.db.database);
  const other = await createTestSite(origin.db.database);
  const clinician = await signIn(origin.app, (await createTestUser(origin.db.database, site, 'clinician')).email);
  const otherAdmin = await signIn(origin.app, (await createTestUser(origin.db.database, other, 'site-admin')).email);
  assert.equal((await origin.app.inject(as(clinician, { url: `/api/sites/${site.siteId}/data-access` }))).statusCode, 403);
  assert.equal((await origin.app.inject(as(otherAdmin, { url: `/api/sites/${site.siteId}/data-access` }))).statusCode, 404);
});

test('retention follows the site\'s setting, which only a service administrator changes; the purge keeps newer rows', async () => {
  const site = await createTestSite(origin.db.database);
  const admin = await signIn(origin.app, (await createTestUser(origin.db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  assert.equal((await origin.app.inject(as(admin, { url: S }))).json().data_access_retention_days, 2190);
  assert.equal((await origin.app.inject(as(admin, { method: 'PATCH', url: S, payload: { data_access_retention_days: 1 } }))).statusCode, 403);
  const changed = await origin.app.inject(as(origin.service, { method: 'PATCH', url: S, payload: { data_access_retention_days: 30 } }));
  assert.equal(changed.statusCode, 200, changed.body);
  assert.equal(changed.json().data_access_retention_days, 30);
  assert.equal((await origin.app.inject(as(origin.service, { method: 'PATCH', url: S, payload: { data_access_retention_days: 0 } }))).statusCode, 400);
  await origin.db.database.query(
    `INSERT INTO data_access_audit (site_id, occurred_at, surface, interaction, resource_type, resource_ids)
     VALUES ($1, now() - interval '31 days', 'fhir', 'read', 'Patient', '{Patient/old}'), ($1, now() - interval '29 days', 'fhir', 'read', 'Patient', '{Patient/recent}')`,
    [site.siteId],
  );
  const purged = await runCliJson<{ purged: { site_id: string; deleted: number }[] }>(['audit', 'purge', '--site', site.siteId], { CG_DATABASE_URL: origin.db.connectionString });
  assert.deepEqual(purged.purged, [{ site_id: site.siteId, deleted: 1 }]);
  const left = (await origin.app.inject(as(admin, { url: `${S}/data-access` }))).json().entries as Entry[];
  assert.deepEqual(left.map((e) => e.resource_ids), [['Patient/recent']]);
});
