import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Patient } from '@medplum/fhirtypes';
import { ensurePatient, upsertPatientDemographics } from '../../../src/domain/patients/demographics.ts';
import { mergePatients } from '../../../src/domain/patients/merge.ts';
import { isDomainError } from '../../../src/domain/errors.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
  // The record store loads the FHIR definitions on its first write (seconds of CPU); do that
  // before the concurrency test so its connection timeouts measure nothing but the test.
  const warm = await createTestSite(db.database);
  await db.database.transaction((tx) => ensurePatient(tx, warm, patient('WARM', 'Up')));
});
after(() => db.drop());

const patient = (id: string, family: string, extra: Partial<Patient> = {}): Patient => ({
  resourceType: 'Patient',
  identifier: [{ value: id }],
  name: [{ family }],
  ...extra,
});

test('ensurePatient creates once under concurrency and never updates', async () => {
  const site = await createTestSite(db.database);
  const results = await Promise.all(Array.from({ length: 8 }, () => db.database.transaction((tx) => ensurePatient(tx, site, patient('E1', 'First')))));
  assert.equal(new Set(results.map((r) => r.patientId)).size, 1);
  assert.equal(results.filter((r) => r.created).length, 1);
  await db.database.transaction((tx) => ensurePatient(tx, site, patient('E1', 'Changed')));
  assert.equal((await resourceStore(db.database, site).findPatientByBusinessIdentifier('E1'))!.name![0]!.family, 'First');
});

test('upsertPatientDemographics creates, updates what is given, keeps the rest, and writes no version for no change', async () => {
  const site = await createTestSite(db.database);
  const created = await db.database.transaction((tx) => upsertPatientDemographics(tx, site, patient('U1', 'One', { birthDate: '1990-01-01', gender: 'female' })));
  assert.equal(created.created, true);
  const updated = await db.database.transaction((tx) => upsertPatientDemographics(tx, site, patient('U1', 'Two')));
  assert.equal(updated.created, false);
  assert.equal(updated.patient.name![0]!.family, 'Two');
  assert.equal(updated.patient.birthDate, '1990-01-01');
  assert.equal(updated.patient.meta!.versionId, '2');
  const same = await db.database.transaction((tx) => upsertPatientDemographics(tx, site, patient('U1', 'Two')));
  assert.equal(same.patient.meta!.versionId, '2');
  await assert.rejects(
    db.database.transaction((tx) => upsertPatientDemographics(tx, site, { resourceType: 'Patient', name: [{ family: 'NoId' }] })),
    (error) => isDomainError(error, 'invalid'),
  );
});

test('mergePatients refuses a self-merge and reports an unknown source', async () => {
  const site = await createTestSite(db.database);
  await assert.rejects(
    db.database.transaction((tx) => mergePatients(tx, site, { sourceIdentifier: 'M1', target: patient('M1', 'Same') })),
    (error) => isDomainError(error, 'invalid'),
  );
  const result = await db.database.transaction((tx) => mergePatients(tx, site, { sourceIdentifier: 'GHOST', target: patient('M2', 'Target') }));
  assert.equal(result.sourceFound, false);
  assert.equal(result.moved, 0);
  assert.ok(await resourceStore(db.database, site).read('Patient', result.targetId));
});

test('after a merge, results and images under the old identifier reach the survivor; an ADT can register it again', async () => {
  const site = await createTestSite(db.database);
  await db.database.transaction((tx) => upsertPatientDemographics(tx, site, patient('OLD', 'Source')));
  const merged = await db.database.transaction((tx) => mergePatients(tx, site, { sourceIdentifier: 'OLD', target: patient('NEW', 'Target') }));
  assert.equal(merged.sourceFound, true);
  const again = await db.database.transaction((tx) => mergePatients(tx, site, { sourceIdentifier: 'OLD', target: patient('NEW', 'Target') }));
  assert.equal(again.alreadyMerged, true);
  // Late results and studies ordered before the merge belong to the survivor, not to a new patient.
  const late = await db.database.transaction((tx) => ensurePatient(tx, site, patient('OLD', 'Late result')));
  assert.deepEqual(late, { patientId: merged.targetId, created: false });
  // An explicit registration (ADT) of the identifier makes a new patient.
  const fresh = await db.database.transaction((tx) => upsertPatientDemographics(tx, site, patient('OLD', 'Reused')));
  assert.equal(fresh.created, true);
  assert.notEqual(fresh.patient.id, merged.targetId);
});
