// Re-sent control ids are not looked up before applying: the copy is applied, refused by the
// message log's unique key, rolled back, and answered with the first ACK. These check that the
// rollback leaves later changes alone and that every path returns the first answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listMessages } from '../../../src/domain/messages/message-log.ts';
import { listVisits } from '../../../src/domain/patients/visits.ts';
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

const send = (site: SiteContext, raw: Buffer) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'mllp', remoteAddress: '127.0.0.1' } });

test('a re-sent admission after an update gets the first ACK and leaves the update in place', async () => {
  const site = await createTestSite(db.database);
  const admit = message(['PID|1||RS1^^^H^MR||First^Name', 'PV1|1|I|WARD^1||||||||||||||||VN-RS1'], { controlId: 'RS-1' });
  const first = await send(site, admit);
  assert.equal(first.ackCode, 'AA');
  const update = await send(site, message(['PID|1||RS1^^^H^MR||Second^Name', 'PV1|1|O|CLINIC^2||||||||||||||||VN-RS1'], { type: 'ADT^A08^ADT_A01', controlId: 'RS-2' }));
  assert.equal(update.ackCode, 'AA');

  const again = await send(site, admit);
  assert.equal(again.duplicate, true);
  assert.equal(again.ack, first.ack);
  const patient = (await resourceStore(db.database, site).findPatientByBusinessIdentifier('RS1'))!;
  assert.equal(patient.name![0]!.family, 'Second');
  assert.equal(patient.meta!.versionId, '2');
  const visits = await listVisits(db.database, site, patient.id!);
  assert.deepEqual(visits.map((v) => v.patientClass), ['O']);
  assert.equal((await listMessages(db.database, site)).messages.length, 2);
});

test('a re-sent message the domain refused gets the very same AE, logged once', async () => {
  const site = await createTestSite(db.database);
  // A merge of a patient into itself passes planning and is refused while applying.
  const raw = message(['EVN|A40|20240101', 'PID|1||SELF^^^H^MR||Self^Sam', 'MRG|SELF^^^H^MR'], { type: 'ADT^A40^ADT_A39', controlId: 'SELF-1' });
  const first = await send(site, raw);
  assert.equal(first.ackCode, 'AE');
  const again = await send(site, raw);
  assert.equal(again.duplicate, true);
  assert.equal(again.ack, first.ack);
  assert.deepEqual(again.errors, first.errors);
  const log = await listMessages(db.database, site);
  assert.equal(log.messages.length, 1);
  assert.equal(log.messages[0]!.outcome, 'error');
});

test('a re-sent message refused while planning gets the very same AE', async () => {
  const site = await createTestSite(db.database);
  const raw = message(['PID|1||""^^^H~||Nobody'], { controlId: 'NOID-1' });
  const first = await send(site, raw);
  assert.equal(first.ackCode, 'AE');
  const again = await send(site, raw);
  assert.equal(again.duplicate, true);
  assert.equal(again.ack, first.ack);
  assert.equal((await listMessages(db.database, site)).messages.length, 1);
});

test('a NUL in the header is an error naming the field (issue 26 point 6); the ACK carries none and is logged', async () => {
  const site = await createTestSite(db.database);
  const raw = Buffer.from('MSH|^~\\&|LAB|HOSP|GATE\x00WAY|SITE|20240102030405||ADT^A01^ADT_A01|NUL-1|P|2.5.1\rPID|1||NUL1^^^H^MR||Null^Byte', 'latin1');
  const outcome = await send(site, raw);
  assert.equal(outcome.ackCode, 'AE');
  assert.ok(outcome.errors.some((e) => e.location === 'MSH[1]-5'));
  assert.match(outcome.ack, /^MSH\|\^~\\&\|GATE\uFFFDWAY\|SITE\|LAB\|HOSP\|/);
  assert.ok(!outcome.ack.includes('\x00'));
  const again = await send(site, raw);
  assert.equal(again.ack, outcome.ack);
  assert.equal((await listMessages(db.database, site)).messages.length, 1);
});

test('a re-send whose second application fails internally gets the first answer, not a retry', async () => {
  const site = await createTestSite(db.database);
  const raw = message(['PID|1||INT1^^^H^MR||Internal^Fail', 'PV1|1|I|WARD^1'], { controlId: 'INT-1' });
  const first = await send(site, raw);
  assert.equal(first.ackCode, 'AA');
  // From now on, writing this site's visits fails with an error the domain does not know.
  await db.database.query(`ALTER TABLE patient_visit ADD CONSTRAINT test_no_visits CHECK (site_id <> '${site.siteId}') NOT VALID`);
  try {
    const fresh = await send(site, message(['PID|1||INT2^^^H^MR', 'PV1|1|I|WARD^1'], { controlId: 'INT-2' }));
    assert.equal(fresh.ackCode, 'AR');
    assert.equal(fresh.retry, true);
    const again = await send(site, raw);
    assert.equal(again.duplicate, true);
    assert.equal(again.retry, false);
    assert.equal(again.ack, first.ack);
  } finally {
    await db.database.query('ALTER TABLE patient_visit DROP CONSTRAINT test_no_visits');
  }
});
