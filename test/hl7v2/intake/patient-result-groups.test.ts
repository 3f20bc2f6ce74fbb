// An ORU^R01 carrying the results of several patients (PATIENT_RESULT repeated, as v2.3
// laboratory feeds batch them): each result is filed under its own PID's patient.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Observation } from '@medplum/fhirtypes';
import { listVisits } from '../../../src/domain/patients/visits.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('each PATIENT_RESULT group of an ORU^R01 is filed under its own patient', async () => {
  const site = await createTestSite(db.database);
  const raw = message(
    [
      'PID|1||GA1^^^HOSP^MR||Alpha^Ann||19800101|F',
      'PV1|1|O|CLINIC1||||||||||||||||VA1',
      'OBR|1||ORDA|GLU^Glucose^L|||20241005120000-0500',
      'OBX|1|NM|2345-7^Glucose^LN||95|mg/dL|70-110|N|||F',
      'PID|2||GB1^^^HOSP^MR||Beta^Bob||19700101|M',
      'PV1|1|E|ER||||||||||||||||VB1',
      'OBR|1||ORDB|GLU^Glucose^L|||20241005120000-0500',
      'OBX|1|NM|2345-7^Glucose^LN||250|mg/dL|70-110|H|||F',
      'NTE|1||repeat in 2 hours',
    ],
    { type: 'ORU^R01', controlId: 'GROUPS-1' },
  );
  const outcome = await ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
  assert.equal(outcome.ackCode, 'AA', JSON.stringify(outcome.errors));
  const store = resourceStore(db.database, site);
  const values = async (identifier: string) => {
    const patient = await store.findPatientByBusinessIdentifier(identifier);
    assert.ok(patient, `patient ${identifier} was created`);
    const records = (await store.listPatientCompartment(patient.id!)) as Observation[];
    return { patient, values: records.filter((r) => r.resourceType === 'Observation').map((o) => [o.valueQuantity?.value, o.note?.map((n) => n.text) ?? []]) };
  };
  const ann = await values('GA1');
  const bob = await values('GB1');
  assert.deepEqual(ann.values, [[95, []]]);
  assert.deepEqual(bob.values, [[250, ['repeat in 2 hours']]]);
  assert.equal(bob.patient.name![0]!.family, 'Beta');
  // Each group's PV1 is its own patient's visit.
  assert.deepEqual((await listVisits(db.database, site, ann.patient.id!)).map((v) => v.visitNumber), ['VA1']);
  assert.deepEqual((await listVisits(db.database, site, bob.patient.id!)).map((v) => v.visitNumber), ['VB1']);
});
