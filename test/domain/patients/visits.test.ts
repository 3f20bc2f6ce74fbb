// A visit's status: stated by some events, kept by the others, implied for visits stored before
// statuses existed; and the corrections of the cancels, which touch one visit of one site.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import { correctVisit } from '../../../src/domain/patients/visit-corrections.ts';
import { listVisits, recordVisit } from '../../../src/domain/patients/visits.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const statuses = async (site: Awaited<ReturnType<typeof createTestSite>>, patientId: string) =>
  Object.fromEntries((await listVisits(db.database, site, patientId)).map((v) => [v.visitNumber ?? '', v.status]));

test('visits stored without a status read as their fields imply, and keep the implied status on an update', async () => {
  const site = await createTestSite(db.database);
  const patientId = randomUUID();
  for (const [number, context] of [['V-ENDED', { visitNumber: 'V-ENDED', dischargeTime: '2024-01-02' }], ['V-PRE', { visitNumber: 'V-PRE', patientClass: 'P' }], ['V-NOW', { visitNumber: 'V-NOW', patientClass: 'I' }]] as const) {
    await db.database.query('INSERT INTO patient_visit (site_id, id, patient_id, visit_number, context) VALUES ($1, gen_random_uuid(), $2, $3, $4)', [site.siteId, patientId, number, JSON.stringify(context)]);
  }
  assert.deepEqual(await statuses(site, patientId), { 'V-ENDED': 'finished', 'V-PRE': 'planned', 'V-NOW': 'in-progress' });
  // An update that states no status takes the implied one for a visit that had none stored...
  await db.database.transaction((tx) => recordVisit(tx, site, patientId, { visitNumber: 'V-ENDED', patientClass: 'I', dischargeTime: '2024-01-02' }));
  // ...and keeps a stored one.
  await db.database.transaction((tx) => recordVisit(tx, site, patientId, { visitNumber: 'V-NOW', status: 'cancelled' }));
  await db.database.transaction((tx) => recordVisit(tx, site, patientId, { visitNumber: 'V-NOW', patientClass: 'O' }));
  assert.deepEqual(await statuses(site, patientId), { 'V-ENDED': 'finished', 'V-PRE': 'planned', 'V-NOW': 'cancelled' });
});

test('a correction changes the named visit of the patient in its site only', async () => {
  const [site, other] = [await createTestSite(db.database), await createTestSite(db.database)];
  const patientId = randomUUID();
  for (const where of [site, other]) await db.database.transaction((tx) => recordVisit(tx, where, patientId, { visitNumber: 'V1', status: 'finished', dischargeTime: '2024-01-02' }));
  assert.equal(await db.database.transaction((tx) => correctVisit(tx, site, patientId, 'V1', { kind: 'cancel-discharge' })), true);
  assert.equal(await db.database.transaction((tx) => correctVisit(tx, site, patientId, 'V2', { kind: 'cancel-visit' })), false);
  assert.equal(await db.database.transaction((tx) => correctVisit(tx, site, randomUUID(), 'V1', { kind: 'cancel-visit' })), false);
  const [mine] = await listVisits(db.database, site, patientId);
  assert.deepEqual([mine!.status, mine!.dischargeTime], ['in-progress', undefined]);
  const [theirs] = await listVisits(db.database, other, patientId);
  assert.deepEqual([theirs!.status, theirs!.dischargeTime], ['finished', '2024-01-02']);
});
