import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition, Observation, Patient } from '@medplum/fhirtypes';
import { isDomainError } from '../../../src/domain/errors.ts';
import { exactTotalLimit, resourceStore } from '../../../src/domain/records/resource-store.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

function patient(identifier: string, extra: Partial<Patient> = {}): Patient {
  return { resourceType: 'Patient', identifier: [{ system: 'urn:mrn', value: identifier }], name: [{ family: 'Doe', given: ['Jane'] }], ...extra };
}

function observation(patientId: string, code = '718-7'): Observation {
  return {
    resourceType: 'Observation',
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code }] },
    subject: { reference: `Patient/${patientId}` },
  };
}

test('create assigns a new UUID, version 1 and lastUpdated, ignoring a client id; read finds it only in its site', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const created = await store.create({ ...patient('MRN-1'), id: 'client-chosen' });
  assert.match(created.id!, /^[0-9a-f-]{36}$/);
  assert.notEqual(created.id, 'client-chosen');
  assert.equal(created.meta?.versionId, '1');
  assert.ok(!Number.isNaN(Date.parse(created.meta!.lastUpdated!)));
  assert.deepEqual(await store.read('Patient', created.id!), created);
  assert.equal(await resourceStore(db.database, other).read('Patient', created.id!), undefined);
  assert.equal(await store.read('Patient', 'not-a-uuid'), undefined);
  assert.equal(await store.read('Observation', created.id!), undefined);
});

test('update makes a new version, keeps history, and refuses stale versions and foreign ids', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const v1 = await store.create(patient('MRN-2'));
  const v2 = await store.update({ ...v1, gender: 'female' }, { ifMatchVersion: '1' });
  assert.equal(v2.meta?.versionId, '2');
  assert.equal(v2.id, v1.id);
  await assert.rejects(store.update({ ...v1, gender: 'male' }, { ifMatchVersion: '1' }), (error) =>
    isDomainError(error, 'precondition-failed'),
  );
  await assert.rejects(resourceStore(db.database, other).update({ ...v2 }), (error) => isDomainError(error, 'not-found'));
  await assert.rejects(store.update({ ...v2, id: '00000000-0000-4000-8000-000000000000' }), (error) => isDomainError(error, 'not-found'));
  await assert.rejects(store.update({ ...v2, id: 'bad id' }), (error) => isDomainError(error, 'not-found'));
  assert.equal((await store.vread<Patient>('Patient', v1.id!, '1'))?.gender, undefined);
  assert.equal((await store.vread<Patient>('Patient', v1.id!, '2'))?.gender, 'female');
  assert.equal(await resourceStore(db.database, other).vread('Patient', v1.id!, '1'), undefined);
  const history = await store.history('Patient', v1.id!);
  assert.deepEqual(
    history?.versions.map((version) => version.meta?.versionId),
    ['2', '1'],
  );
  assert.equal(await resourceStore(db.database, other).history('Patient', v1.id!), undefined);
});

test('an active business identifier is unique per site, also under concurrent intake', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const first = await store.create(patient('MRN-3'));
  await assert.rejects(store.create(patient('MRN-3')), (error) => isDomainError(error, 'conflict'));
  // Another site may use the same identifier.
  await resourceStore(db.database, other).create(patient('MRN-3'));
  // An inactive (e.g. merged) patient does not hold the identifier.
  await store.update({ ...first, active: false });
  const second = await store.create(patient('MRN-3'));
  assert.equal((await store.findPatientByBusinessIdentifier('MRN-3'))?.id, second.id);
  // Reactivating the old one would make two active patients.
  await assert.rejects(store.update({ ...first, active: true }), (error) => isDomainError(error, 'conflict'));

  const results = await Promise.all(
    Array.from({ length: 20 }, () => store.findOrCreatePatient('MRN-RACE', () => patient('MRN-RACE'))),
  );
  assert.equal(results.filter((result) => result.created).length, 1);
  assert.equal(new Set(results.map((result) => result.patient.id)).size, 1);
  const raced = await Promise.allSettled(Array.from({ length: 20 }, () => store.create(patient('MRN-RACE-2'))));
  assert.equal(raced.filter((result) => result.status === 'fulfilled').length, 1);
  for (const result of raced) {
    if (result.status === 'rejected') assert.ok(isDomainError(result.reason, 'conflict'));
  }
});

test('a subject must be a patient of the same site', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const foreign = await resourceStore(db.database, other).create(patient('MRN-4'));
  const store = resourceStore(db.database, site);
  await assert.rejects(store.create(observation(foreign.id!)), (error) => {
    assert.ok(isDomainError(error, 'business-rule'));
    assert.equal(error.issues[0]?.location, 'Observation.subject.reference');
    return true;
  });
  await assert.rejects(store.create({ ...observation('x'), subject: { reference: 'Group/1' } }), (error) => {
    assert.ok(isDomainError(error, 'invalid'));
    assert.equal(error.issues[0]?.location, 'Observation.subject.reference');
    return true;
  });
  await assert.rejects(store.create(observation('not-a-uuid')), (error) => isDomainError(error, 'business-rule'));
});

test('invalid resources are refused with one located issue per problem', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  await assert.rejects(
    store.create({ resourceType: 'Patient', gender: 'robot', birthDate: '1980-13-45', unknown: 1 } as unknown as Patient),
    (error) => {
      assert.ok(isDomainError(error, 'invalid'));
      const locations = error.issues.map((issue) => issue.location).sort();
      assert.deepEqual(locations, ['Patient.birthDate', 'Patient.gender', 'Patient.unknown']);
      return true;
    },
  );
  const owner = await store.create(patient('MRN-5'));
  await assert.rejects(
    store.create<Condition>({
      resourceType: 'Condition',
      subject: { reference: `Patient/${owner.id}` },
      clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'gone' }] },
    }),
    (error) => isDomainError(error, 'invalid') && error.issues[0]?.location === 'Condition.clinicalStatus',
  );
  await assert.rejects(store.create({ resourceType: 'Medication' }), (error) => isDomainError(error, 'unsupported'));
});

test('writes join the caller transaction: a rollback leaves nothing behind', async () => {
  const site = await createTestSite(db.database);
  let createdId = '';
  await assert.rejects(
    db.database.transaction(async (tx) => {
      const store = resourceStore(tx, site);
      const created = await store.create(patient('MRN-6'));
      createdId = created.id!;
      await store.create(observation(created.id!));
      assert.equal((await store.listPatientCompartment(created.id!)).length, 1);
      throw new Error('abort the message');
    }),
    /abort the message/,
  );
  const store = resourceStore(db.database, site);
  assert.equal(await store.read('Patient', createdId), undefined);
  assert.equal(await store.findPatientByBusinessIdentifier('MRN-6'), undefined);
  assert.equal((await store.search({ type: 'Observation', conditions: [], sort: [], count: 10, total: 'accurate' })).total, 0);
});

test('identifiers and the patient compartment are found within the site only', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  const owner = await store.create(patient('MRN-7'));
  const result = await store.create({ ...observation(owner.id!), identifier: [{ system: 'urn:filler', value: 'F-1' }] });
  await store.create<Condition>({ resourceType: 'Condition', subject: { reference: `Patient/${owner.id}` } });
  assert.deepEqual((await store.findByIdentifier('Observation', { system: 'urn:filler', value: 'F-1' })).map((r) => r.id), [result.id]);
  assert.deepEqual((await store.findByIdentifier('Observation', { value: 'F-1' })).map((r) => r.id), [result.id]);
  assert.deepEqual(await store.findByIdentifier('Observation', { system: 'urn:other', value: 'F-1' }), []);
  assert.deepEqual((await store.findByIdentifier('Patient', { value: 'MRN-7' })).map((r) => r.id), [owner.id]);
  assert.deepEqual(await resourceStore(db.database, other).findByIdentifier('Observation', { value: 'F-1' }), []);
  assert.deepEqual(
    (await store.listPatientCompartment(owner.id!)).map((r) => r.resourceType),
    ['Observation', 'Condition'],
  );
  assert.deepEqual(await resourceStore(db.database, other).listPatientCompartment(owner.id!), []);
});

test('totals: exact up to the limit, left out (bounded) or estimated above it, exact when asked', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  // Bulk rows straight into the table: the total only counts rows, it does not read them.
  await db.database.query(
    `INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content)
     SELECT $1, 'Procedure', gen_random_uuid(), 1, now(), '{"resourceType":"Procedure"}'::jsonb FROM generate_series(1, $2::int)`,
    [site.siteId, exactTotalLimit + 1],
  );
  await db.database.query('ANALYZE clinical_resource');
  const request = { type: 'Procedure' as const, conditions: [], sort: [], count: 1 };
  assert.equal((await store.search({ ...request, total: 'accurate' })).total, exactTotalLimit + 1);
  assert.equal((await store.search({ ...request, total: 'bounded' })).total, undefined);
  assert.ok((await store.search({ ...request, total: 'estimate' })).total! > exactTotalLimit);
  assert.equal((await store.search({ ...request, total: 'none' })).total, undefined);
  assert.equal((await store.search({ ...request, type: 'Condition', total: 'bounded' })).total, 0);
});
