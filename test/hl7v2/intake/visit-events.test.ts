// ADT events beyond admit, transfer, discharge and update (HL7 v2.5.1 chapter 3): pre-admit (A05),
// the changes of patient class (A06, A07) and the cancels (A11, A12, A13), as a sender's interface
// engine sends them one after the other about one visit.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listVisits, type StoredVisit } from '../../../src/domain/patients/visits.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2, type IntakeOutcome } from '../../../src/hl7v2/intake/intake.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

/** A PV1 with the given fields (2 class, 3 location, 6 prior location, 19 visit number, 44/45 times). */
function pv1(fields: Record<number, string>): string {
  const values = Array.from({ length: 45 }, (_, i) => fields[i + 1] ?? '');
  values[0] ||= '1';
  return ['PV1', ...values].join('|').replace(/\|+$/, '');
}

async function send(site: SiteContext, event: string, segments: string[]): Promise<IntakeOutcome> {
  return ingestHl7v2(db.database, { raw: message(segments, { type: `ADT^${event}` }), site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
}

async function visitsOf(site: SiteContext, identifier: string): Promise<Map<string, StoredVisit>> {
  const patient = (await resourceStore(db.database, site).findPatientByBusinessIdentifier(identifier))!;
  return new Map((await listVisits(db.database, site, patient.id!)).map((visit) => [visit.visitNumber ?? '', visit]));
}

const pid = (identifier: string, family = 'Doe') => `PID|1||${identifier}^^^H^MR||${family}^Jane||19800101|F`;

test('A05 stores a pre-admission that does not look current; A01 of the same visit admits the patient', async () => {
  const site = await createTestSite(db.database);
  assert.equal((await send(site, 'A05', [pid('PRE1'), pv1({ 2: 'P', 3: 'W1^101', 19: 'VN-PRE' })])).ackCode, 'AA');
  assert.equal((await visitsOf(site, 'PRE1')).get('VN-PRE')!.status, 'planned');
  // An update of the pre-admission (A08) says nothing of its status: still planned.
  assert.equal((await send(site, 'A08', [pid('PRE1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-PRE' })])).ackCode, 'AA');
  assert.equal((await visitsOf(site, 'PRE1')).get('VN-PRE')!.status, 'planned');
  assert.equal((await send(site, 'A01', [pid('PRE1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-PRE' })])).ackCode, 'AA');
  assert.equal((await visitsOf(site, 'PRE1')).get('VN-PRE')!.status, 'in-progress');
});

test('A06 and A07 change the class of the visit and update the demographics', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A04', [pid('CLS1'), pv1({ 2: 'O', 3: 'CLINIC', 19: 'VN-C' })]);
  const toInpatient = await send(site, 'A06', [pid('CLS1', 'Renamed'), pv1({ 2: 'I', 3: 'W2^7', 19: 'VN-C' })]);
  assert.equal(toInpatient.ackCode, 'AA');
  let visit = (await visitsOf(site, 'CLS1')).get('VN-C')!;
  assert.deepEqual([visit.patientClass, visit.location?.pointOfCare, visit.status], ['I', 'W2', 'in-progress']);
  assert.equal((await resourceStore(db.database, site).findPatientByBusinessIdentifier('CLS1'))!.name![0]!.family, 'Renamed');
  assert.equal((await send(site, 'A07', [pid('CLS1', 'Renamed'), pv1({ 2: 'O', 3: 'CLINIC', 19: 'VN-C' })])).ackCode, 'AA');
  visit = (await visitsOf(site, 'CLS1')).get('VN-C')!;
  assert.deepEqual([visit.patientClass, visit.status], ['O', 'in-progress']);
  // A new visit number with the prior one in MRG-5 is stored as its own visit, and the ACK says the MRG was not applied.
  const renumbered = await send(site, 'A06', [pid('CLS1', 'Renamed'), 'MRG|CLS1^^^H^MR||||VN-C', pv1({ 2: 'I', 3: 'W2^7', 19: 'VN-C2' })]);
  assert.deepEqual(renumbered.warnings.map((w) => `${w.code} ${w.location}`), ['100 MRG[1]']);
  assert.deepEqual([...(await visitsOf(site, 'CLS1')).keys()].sort(), ['VN-C', 'VN-C2']);
});

test('A11 marks the visit cancelled and keeps the patient; an update keeps it cancelled, a new A01 makes it current', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A01', [pid('CAN1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-OLD' })]);
  await send(site, 'A01', [pid('CAN1'), pv1({ 2: 'I', 3: 'W1^102', 19: 'VN-WRONG', 44: '20240301080000+0000' })]);
  const cancel = await send(site, 'A11', [pid('CAN1', 'NotApplied'), pv1({ 2: 'I', 3: 'W1^102', 19: 'VN-WRONG' })]);
  assert.equal(cancel.ackCode, 'AA');
  assert.deepEqual(cancel.warnings, []);
  let visits = await visitsOf(site, 'CAN1');
  assert.equal(visits.get('VN-WRONG')!.status, 'cancelled');
  // What the visit was stays readable; only its status changed.
  assert.equal(visits.get('VN-WRONG')!.admitTime, '2024-03-01T08:00:00+00:00');
  assert.equal(visits.get('VN-OLD')!.status, 'in-progress');
  const patient = (await resourceStore(db.database, site).findPatientByBusinessIdentifier('CAN1'))!;
  assert.equal(patient.name![0]!.family, 'Doe', 'a cancel does not change demographics');
  assert.notEqual(patient.active, false);
  await send(site, 'A08', [pid('CAN1'), pv1({ 2: 'I', 3: 'W1^103', 19: 'VN-WRONG' })]);
  visits = await visitsOf(site, 'CAN1');
  assert.deepEqual([visits.get('VN-WRONG')!.status, visits.get('VN-WRONG')!.location?.room], ['cancelled', '103']);
  await send(site, 'A01', [pid('CAN1'), pv1({ 2: 'I', 3: 'W1^102', 19: 'VN-WRONG' })]);
  assert.equal((await visitsOf(site, 'CAN1')).get('VN-WRONG')!.status, 'in-progress');
});

test('A12 puts the patient back at PV1-3, the location before the transfer', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A01', [pid('TRF1'), pv1({ 2: 'I', 3: 'WARD1^1^A^MAIN', 7: 'D1^House^Greg', 19: 'VN-T' })]);
  await send(site, 'A02', [pid('TRF1'), pv1({ 2: 'I', 3: 'ICU^4^B^MAIN', 6: 'WARD1^1^A^MAIN', 7: 'D1^House^Greg', 19: 'VN-T' })]);
  assert.equal((await visitsOf(site, 'TRF1')).get('VN-T')!.location?.pointOfCare, 'ICU');
  const cancel = await send(site, 'A12', [pid('TRF1'), pv1({ 2: 'I', 3: 'WARD1^1^A^MAIN', 6: 'ICU^4^B^MAIN', 19: 'VN-T' })]);
  assert.equal(cancel.ackCode, 'AA');
  const visit = (await visitsOf(site, 'TRF1')).get('VN-T')!;
  assert.deepEqual(visit.location, { pointOfCare: 'WARD1', room: '1', bed: 'A', facility: 'MAIN', text: 'MAIN / WARD1 / 1 / A' });
  assert.equal(visit.attendingDoctor?.display, 'Greg House');
  assert.equal(visit.status, 'in-progress');
});

test('A13 makes a discharged visit current again, its discharge time cleared', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A01', [pid('DIS1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-D', 44: '20240301080000+0000' })]);
  await send(site, 'A03', [pid('DIS1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-D', 44: '20240301080000+0000', 45: '20240305100000+0000' })]);
  let visit = (await visitsOf(site, 'DIS1')).get('VN-D')!;
  assert.deepEqual([visit.status, visit.dischargeTime], ['finished', '2024-03-05T10:00:00+00:00']);
  assert.equal((await send(site, 'A13', [pid('DIS1'), pv1({ 2: 'I', 3: 'W1^104', 19: 'VN-D' })])).ackCode, 'AA');
  visit = (await visitsOf(site, 'DIS1')).get('VN-D')!;
  assert.equal(visit.status, 'in-progress');
  assert.equal(visit.dischargeTime, undefined);
  assert.equal(visit.admitTime, '2024-03-01T08:00:00+00:00');
  assert.equal(visit.location?.room, '104');
});

test('a cancel that names no visit is AE at the field it lacks, and changes nothing', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A01', [pid('ERR1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-E' })]);
  const cases: [string, string[], string][] = [
    ['A11', [pid('ERR1')], '100 PV1[1]'],
    ['A11', [pid('ERR1'), pv1({ 2: 'I', 3: 'W1^101' })], '101 PV1[1]-19'],
    ['A13', [pid('ERR1'), pv1({ 2: 'I' })], '101 PV1[1]-19'],
    ['A12', [pid('ERR1'), pv1({ 2: 'I', 6: 'ICU', 19: 'VN-E' })], '101 PV1[1]-3'],
    ['A11', ['PID|1||""||Doe^Jane', pv1({ 19: 'VN-E' })], '101 PID[1]-3.1'],
  ];
  for (const [event, segments, expected] of cases) {
    const outcome = await send(site, event, segments);
    assert.equal(outcome.ackCode, 'AE', `${event} ${expected}`);
    assert.deepEqual(outcome.errors.map((e) => `${e.code} ${e.location}`), [expected], event);
  }
  const visit = (await visitsOf(site, 'ERR1')).get('VN-E')!;
  assert.deepEqual([visit.status, visit.location?.pointOfCare], ['in-progress', 'W1']);
});

test('a cancel of a visit or patient the site does not know is AA with a warning, and creates nothing', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A01', [pid('UNK1'), pv1({ 2: 'I', 3: 'W1^101', 19: 'VN-U' })]);
  const visit = await send(site, 'A11', [pid('UNK1'), pv1({ 2: 'I', 19: 'VN-NEVER' })]);
  assert.equal(visit.ackCode, 'AA');
  assert.deepEqual(visit.warnings.map((w) => `${w.code} ${w.location}`), ['204 PV1[1]-19']);
  assert.deepEqual([...(await visitsOf(site, 'UNK1')).keys()], ['VN-U']);
  const patient = await send(site, 'A13', [pid('UNK-NOBODY'), pv1({ 2: 'I', 19: 'VN-U' })]);
  assert.equal(patient.ackCode, 'AA');
  assert.deepEqual(patient.warnings.map((w) => `${w.code} ${w.location}`), ['204 PID[1]-3']);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('UNK-NOBODY'), undefined);
});

test('a result about a cancelled visit leaves it cancelled', async () => {
  const site = await createTestSite(db.database);
  await send(site, 'A01', [pid('RES1'), pv1({ 2: 'I', 19: 'VN-R' })]);
  await send(site, 'A11', [pid('RES1'), pv1({ 2: 'I', 19: 'VN-R' })]);
  const raw = message([pid('RES1'), pv1({ 2: 'I', 3: 'W9', 19: 'VN-R' }), 'OBR|1||ORD-R1', 'OBX|1|NM|2345-7^Glucose^LN||5.5|mmol/L|||||F'], { type: 'ORU^R01^ORU_R01' });
  assert.equal((await ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } })).ackCode, 'AA');
  assert.equal((await visitsOf(site, 'RES1')).get('VN-R')!.status, 'cancelled');
});
