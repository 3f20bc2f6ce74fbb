// PID-29 / PID-30: a death notice (ADT^A08 with the death time and indicator) is stored on the
// patient, not dropped under AA.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const send = (site: SiteContext, pid: string, type = 'ADT^A08^ADT_A01') =>
  ingestHl7v2(db.database, { raw: message([`EVN|${type.split('^')[1]}`, pid], { type }), site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
// PID-1 to PID-28 of one patient, so that a test appends PID-29 and PID-30.
const pid = 'PID|1||D1^^^HOSP^MR||Doe^Jane||19400101|F' + '|'.repeat(20);

test('a death time and indicator are stored, kept by an update that omits them, and deleted by ""', async () => {
  const site = await createTestSite(db.database);
  assert.equal((await send(site, pid, 'ADT^A01^ADT_A01')).ackCode, 'AA');
  const store = resourceStore(db.database, site);
  const read = async () => (await store.findPatientByBusinessIdentifier('D1'))!;
  assert.equal((await read()).deceasedDateTime, undefined);

  const died = await send(site, `${pid}|20241004120000-0500|Y`);
  assert.equal(died.ackCode, 'AA', JSON.stringify(died.errors));
  assert.equal((await read()).deceasedDateTime, '2024-10-04T12:00:00-05:00');

  assert.equal((await send(site, pid)).ackCode, 'AA');
  assert.equal((await read()).deceasedDateTime, '2024-10-04T12:00:00-05:00', 'empty fields change nothing');

  assert.equal((await send(site, `${pid}|""|""`)).ackCode, 'AA');
  const undone = await read();
  assert.equal(undone.deceasedDateTime, undefined);
  assert.equal(undone.deceasedBoolean, undefined);

  // The indicator alone (no time known) is a boolean.
  assert.equal((await send(site, `${pid}||Y`)).ackCode, 'AA');
  assert.equal((await read()).deceasedBoolean, true);
});

test('a death time with the indicator "N" contradicts itself: AE at PID-30, nothing stored', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(site, `${pid}|20241004120000-0500|N`, 'ADT^A01^ADT_A01');
  assert.equal(outcome.ackCode, 'AE');
  assert.deepEqual(outcome.errors.map((e) => [e.code, e.location]), [[102, 'PID[1]-30']]);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('D1'), undefined);
});
