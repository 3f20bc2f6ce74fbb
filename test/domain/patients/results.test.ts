import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DocumentReference, Observation, Patient } from '@medplum/fhirtypes';
import { recordPatientResults as recordIncoming, type PatientResult } from '../../../src/domain/patients/observations.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import type { Transaction } from '../../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const system = 'urn:oid:2.16.840.1.113883.3.999.1';

/** Results with no former identities, as most callers have them. */
const recordPatientResults = (tx: Transaction, site: SiteContext, patientId: string, results: PatientResult[]) =>
  recordIncoming(tx, site, patientId, results.map((resource) => ({ resource })));

async function newPatient(site: SiteContext): Promise<string> {
  const patient: Patient = { resourceType: 'Patient', identifier: [{ system: 'urn:mrn', value: crypto.randomUUID() }], name: [{ family: 'Doe' }] };
  return (await resourceStore(db.database, site).create(patient)).id!;
}

function result(value: string, reading = 95): Observation {
  return {
    resourceType: 'Observation',
    identifier: [{ system, value }],
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] },
    valueQuantity: { value: reading, unit: 'mg/dL' },
  };
}

function report(value: string): DocumentReference {
  return { resourceType: 'DocumentReference', identifier: [{ system, value }], status: 'current', content: [{ attachment: { contentType: 'text/plain', data: 'aGVsbG8=' } }] };
}

async function carriers(site: SiteContext, type: 'Observation' | 'DocumentReference', value: string) {
  return resourceStore(db.database, site).findByIdentifier(type, { system, value });
}

test('the results of one message are created together in their order, and sent again change nothing', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const tag = crypto.randomUUID();
  const results = [...[1, 2, 3, 4, 5].map((n) => result(`${tag}-${n}`, 90 + n)), report(`${tag}-doc`)];
  const first = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, results));
  assert.deepEqual(first.map((stored) => stored.created), [true, true, true, true, true, true]);
  assert.deepEqual(first.map((stored) => stored.resource.identifier?.[0]?.value), results.map((r) => r.identifier?.[0]?.value));
  for (const stored of first) {
    assert.equal((stored.resource as Observation).subject?.reference, `Patient/${patientId}`);
    const found = await carriers(site, stored.resource.resourceType, stored.resource.identifier![0]!.value!);
    assert.deepEqual(found.map((resource) => resource.id), [stored.resource.id]);
  }
  assert.equal((first[2]!.resource as Observation).valueQuantity?.value, 93);

  const again = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, results));
  assert.deepEqual(again.map((stored) => stored.created), [false, false, false, false, false, false]);
  assert.deepEqual(again.map((stored) => stored.resource.id), first.map((stored) => stored.resource.id));
  assert.ok(again.every((stored) => stored.resource.meta?.versionId === '1'));

  // A corrected result updates its resource; the others stay as they were.
  const corrected = results.map((r, n) => (n === 1 ? result(`${tag}-2`, 150) : r));
  const third = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, corrected));
  assert.deepEqual(third.map((stored) => stored.resource.meta?.versionId), ['1', '2', '1', '1', '1', '1']);
  assert.equal((third[1]!.resource as Observation).valueQuantity?.value, 150);
  assert.equal(third[1]!.resource.id, first[1]!.resource.id);
});

test('the same identifiers in another site are other results', async () => {
  const [site, other] = [await createTestSite(db.database), await createTestSite(db.database)];
  const tag = crypto.randomUUID();
  const results = [result(`${tag}-1`), result(`${tag}-2`)];
  const here = await db.database.transaction(async (tx) => recordPatientResults(tx, site, await newPatient(site), results));
  const there = await db.database.transaction(async (tx) => recordPatientResults(tx, other, await newPatient(other), results));
  assert.ok(there.every((stored) => stored.created));
  assert.notDeepEqual(there.map((stored) => stored.resource.id), here.map((stored) => stored.resource.id));
});

function text(value: string, line: string, code = '2345-7'): Observation {
  return { resourceType: 'Observation', identifier: [{ system, value }], status: 'final', code: { coding: [{ system: 'http://loinc.org', code }] }, valueString: line };
}

const valuesOf = async (site: SiteContext, value: string) =>
  ((await carriers(site, 'Observation', value)) as Observation[]).map((o) => o.valueString ?? o.valueQuantity?.value);

test('results sharing an identity in one message are each stored, and found again by value kind, then order', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const value = crypto.randomUUID();
  const stored = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [result(value, 80), result(value, 81)]));
  assert.deepEqual(stored.map((one) => one.created), [true, true]);
  assert.deepEqual(await valuesOf(site, value), [80, 81]);

  // A fuller report: a text result of that identity first, then the two numbers, the second changed.
  const fuller = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [text(value, '>100,000'), result(value, 80), result(value, 82)]));
  assert.deepEqual(fuller.map((one) => one.created), [true, false, false]);
  assert.deepEqual(fuller.slice(1).map((one) => one.resource.id), stored.map((one) => one.resource.id));
  assert.deepEqual(fuller.map((one) => one.resource.meta?.versionId), ['1', '1', '2']);
  assert.deepEqual(await valuesOf(site, value), [80, 82, '>100,000']);
});

test('a lone incoming result of an identity with several stored is the first stored of its value kind', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const value = crypto.randomUUID();
  await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [text(value, 'colony count'), result(value, 80)]));
  const [corrected] = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [result(value, 90)]));
  assert.equal(corrected!.created, false);
  assert.deepEqual(await valuesOf(site, value), ['colony count', 90]);
});

test('a lone stored result and a lone incoming one of an identity are the same result, whatever their values', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const value = crypto.randomUUID();
  const [pending] = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [text(value, 'pending')]));
  const [final] = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [result(value, 5.5)]));
  assert.equal(final!.resource.id, pending!.resource.id);
  assert.deepEqual(await valuesOf(site, value), [5.5]);
});

test('a stored result is never updated into one with another code', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const value = crypto.randomUUID();
  await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [text(value, 'Daptomycin S', 'DAP')]));
  const [other] = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [text(value, 'Ciprofloxacin R', 'CIP')]));
  assert.equal(other!.created, true);
  const found = (await carriers(site, 'Observation', value)) as Observation[];
  assert.deepEqual(found.map((o) => [o.code.coding![0]!.code, o.valueString, o.meta?.versionId]), [['DAP', 'Daptomycin S', '1'], ['CIP', 'Ciprofloxacin R', '1']]);
});

test('a result stored under a former identity is found by it and takes the identity when written', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const [former, identity] = [crypto.randomUUID(), crypto.randomUUID()];
  const [first] = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [result(former, 80)]));
  const [again] = await db.database.transaction((tx) => recordIncoming(tx, site, patientId, [{ resource: result(identity, 80), formerIdentifiers: [{ system, value: former }] }]));
  assert.equal(again!.created, false);
  assert.equal(again!.resource.id, first!.resource.id);
  assert.equal(again!.resource.meta?.versionId, '2');
  assert.deepEqual(await carriers(site, 'Observation', former), []);
  assert.deepEqual((await carriers(site, 'Observation', identity)).map((o) => o.id), [first!.resource.id]);
});

test('an identifier on a result of another type does not make a result of this type exist', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const value = crypto.randomUUID();
  await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [result(value)]));
  const [stored] = await db.database.transaction((tx) => recordPatientResults(tx, site, patientId, [report(value)]));
  assert.equal(stored!.created, true);
});

test('concurrent messages with overlapping results, in opposite orders, store each result once', async () => {
  const site = await createTestSite(db.database);
  const patientId = await newPatient(site);
  const tag = crypto.randomUUID();
  const values = [1, 2, 3, 4].map((n) => `${tag}-${n}`);
  const messages = Array.from({ length: 8 }, (_, n) => (n % 2 === 0 ? values : [...values].reverse()).map((value) => result(value)));
  const outcomes = await Promise.all(messages.map((message) => db.database.transaction((tx) => recordPatientResults(tx, site, patientId, message))));
  assert.equal(outcomes.flat().filter((stored) => stored.created).length, values.length);
  for (const value of values) assert.equal((await carriers(site, 'Observation', value)).length, 1);
});
