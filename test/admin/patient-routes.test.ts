// The patient search and chart of the admin API: results stored from HL7 v2 ORU with value,
// unit, range and flag; conditions, allergies and documents newest first; another site's patient
// is 404; bad search input is a 400 naming the field; both reads go to the data access log.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { createTestSite } from '../support/sites.ts';
import { admitPatientWithResults } from './clinical-fixtures.ts';
import { adminOriginForFile, as, createTestUser, signIn } from './support.ts';

const origin = adminOriginForFile();

test('a clinician finds a patient by name, identifier or birth date and reads the chart', async () => {
  const { db, app } = origin;
  const site = await createTestSite(db.database);
  const { studyInstanceUid } = await admitPatientWithResults(db.database, site, 'API-1001');
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('API-1001'))!;
  await store.create({ resourceType: 'Condition', subject: { reference: `Patient/${patient.id}` }, code: { text: 'Asthma' }, recordedDate: '2019-03-01' });
  await store.create({ resourceType: 'Condition', subject: { reference: `Patient/${patient.id}` }, code: { text: 'Hypertension' }, recordedDate: '2024-06-01' });
  await store.create({ resourceType: 'AllergyIntolerance', patient: { reference: `Patient/${patient.id}` }, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] }, code: { text: 'Penicillin' }, criticality: 'high', reaction: [{ manifestation: [{ text: 'Hives' }] }] });
  const clinician = await signIn(app, (await createTestUser(db.database, site, 'clinician')).email);
  const S = `/api/sites/${site.siteId}`;

  for (const search of ['name=mart', 'identifier=API-1001', 'birth_date=1980-05-17', 'name=claire&birth_date=1980-05-17']) {
    const found = await app.inject(as(clinician, { url: `${S}/patients?${search}` }));
    assert.equal(found.statusCode, 200, search);
    assert.deepEqual(found.json().patients, [{ id: patient.id, name: 'Claire Martin', birth_date: '1980-05-17', gender: 'female', identifier: 'API-1001', active: true }], search);
  }
  assert.deepEqual((await app.inject(as(clinician, { url: `${S}/patients?name=martin&birth_date=1990-01-01` }))).json().patients, []);

  const chart = await app.inject(as(clinician, { url: `${S}/patients/${patient.id}` }));
  assert.equal(chart.statusCode, 200);
  const body = chart.json();
  assert.equal(body.patient.gender, 'female');
  assert.deepEqual(body.patient.identifiers[0], { value: 'API-1001', system: null, type: 'MR', use: null });
  const cholesterol = body.observations.find((o: { code: string }) => o.code === '2093-3');
  assert.deepEqual(
    { value: cholesterol.value, unit: cholesterol.unit, range: cholesterol.reference_range, flags: cholesterol.interpretation, effective: cholesterol.effective, status: cholesterol.status },
    { value: '245', unit: 'mg/dL', range: '<200', flags: [{ code: 'H', text: null }], effective: '2026-11-20T08:30:00+01:00', status: 'final' },
  );
  assert.deepEqual(body.conditions.map((c: { name: string }) => c.name), ['Hypertension', 'Asthma'], 'newest first');
  assert.deepEqual(body.allergies.map((a: { substance: string; reactions: string[] }) => [a.substance, a.reactions]), [['Penicillin', ['Hives']]]);
  assert.deepEqual(body.studies.map((s: { study_instance_uid: string }) => s.study_instance_uid), [studyInstanceUid]);
  assert.equal(body.truncated, false);

  await dataAccessRecorder(db.database).settled();
  const { rows } = await db.database.query<{ interaction: string; resource_type: string; patient_ids: string[] }>(
    `SELECT interaction, resource_type, patient_ids FROM data_access_audit WHERE site_id = $1 AND resource_type = 'Patient' ORDER BY occurred_at`,
    [site.siteId],
  );
  assert.ok(rows.some((row) => row.interaction === 'search' && row.patient_ids.includes(patient.id!)));
  assert.ok(rows.some((row) => row.interaction === 'view' && row.patient_ids.includes(patient.id!)));
});

test('another site\'s patient is 404 and bad search input is a 400 naming the field', async () => {
  const { db, app } = origin;
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  await admitPatientWithResults(db.database, other, 'OTHER-1');
  const foreign = (await resourceStore(db.database, other).findPatientByBusinessIdentifier('OTHER-1'))!;
  const clinician = await signIn(app, (await createTestUser(db.database, site, 'clinician')).email);
  const S = `/api/sites/${site.siteId}`;
  assert.equal((await app.inject(as(clinician, { url: `${S}/patients/${foreign.id}` }))).statusCode, 404);
  assert.equal((await app.inject(as(clinician, { url: `/api/sites/${other.siteId}/patients/${foreign.id}` }))).statusCode, 404);
  assert.deepEqual((await app.inject(as(clinician, { url: `${S}/patients?identifier=OTHER-1` }))).json().patients, []);
  assert.equal((await app.inject(as(clinician, { url: `${S}/patients/not-a-uuid` }))).statusCode, 404);

  const empty = await app.inject(as(clinician, { url: `${S}/patients` }));
  assert.equal(empty.statusCode, 400);
  assert.match(empty.json().error.message, /name, an identifier or a birth date/);
  const badDate = await app.inject(as(clinician, { url: `${S}/patients?birth_date=17.05.1980` }));
  assert.equal(badDate.statusCode, 400);
  assert.equal(badDate.json().error.fields[0].field, 'birth_date');
  assert.equal((await app.inject(as(clinician, { url: `${S}/patients?name=${'x'.repeat(201)}` }))).statusCode, 400);
  assert.equal((await app.inject(as(clinician, { url: `${S}/patients?colour=red` }))).statusCode, 400);
  assert.equal((await app.inject({ url: `${S}/patients?name=x` })).statusCode, 401);
});

test('stay signed in: the extend call restarts the idle limit and says how long it is', async () => {
  const { db, app } = origin;
  const site = await createTestSite(db.database);
  const clinician = await signIn(app, (await createTestUser(db.database, site, 'clinician')).email);
  await db.database.query(`UPDATE admin_session SET last_seen_at = now() - interval '29 minutes'`);
  const extended = await app.inject(as(clinician, { method: 'POST', url: '/api/session/extend' }));
  assert.equal(extended.statusCode, 200, extended.body);
  assert.equal(extended.json().idle_timeout_seconds, 1800);
  assert.equal(extended.json().idle_warning_seconds, 180);
  const { rows } = await db.database.query<{ idle: number }>(`SELECT extract(epoch FROM now() - max(last_seen_at))::int AS idle FROM admin_session`);
  assert.ok(rows[0]!.idle < 60);
  assert.equal((await app.inject(as(clinician, { method: 'POST', url: '/api/session/extend', headers: { 'x-csrf-token': 'wrong' } }))).statusCode, 403);
  await db.database.query(`UPDATE admin_session SET last_seen_at = now() - interval '31 minutes'`);
  assert.equal((await app.inject(as(clinician, { method: 'POST', url: '/api/session/extend' }))).statusCode, 401, 'an ended session cannot be extended');
});
