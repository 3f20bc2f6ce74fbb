import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { DuplicateMessageError, findLoggedMessage, getMessage, listMessages, recordMessage, type NewMessage } from '../../../src/domain/messages/message-log.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const entry = (controlId: string | undefined, overrides: Partial<NewMessage> = {}): NewMessage => ({
  protocol: 'hl7v2',
  transport: 'mllp',
  sendingApplication: 'LAB',
  sendingFacility: 'HOSP',
  ...(controlId !== undefined ? { controlId } : {}),
  messageType: 'ADT^A01',
  outcome: 'processed',
  ackCode: 'AA',
  problems: [],
  ackText: `MSH|...|${controlId}`,
  raw: Buffer.from([0x4d, 0x53, 0x48, 0xe9]),
  remoteAddress: '127.0.0.1',
  ...overrides,
});

test('a recorded message is found by its sender and control id, with raw bytes intact', async () => {
  const site = await createTestSite(db.database);
  const { id } = await db.database.transaction((tx) => recordMessage(tx, site, entry('C1')));
  const found = await findLoggedMessage(db.database, site, { protocol: 'hl7v2', sendingApplication: 'LAB', sendingFacility: 'HOSP', controlId: 'C1' });
  assert.equal(found!.id, id);
  assert.equal(found!.ackText, 'MSH|...|C1');
  assert.deepEqual([...found!.raw!], [0x4d, 0x53, 0x48, 0xe9]);
  assert.equal(await findLoggedMessage(db.database, site, { protocol: 'hl7v3', sendingApplication: 'LAB', sendingFacility: 'HOSP', controlId: 'C1' }), undefined);
  assert.equal(await findLoggedMessage(db.database, site, { protocol: 'hl7v2', sendingApplication: 'LAB', sendingFacility: 'OTHER', controlId: 'C1' }), undefined);
});

test('a repeated key throws DuplicateMessageError and leaves the transaction usable', async () => {
  const site = await createTestSite(db.database);
  await db.database.transaction((tx) => recordMessage(tx, site, entry('C2')));
  await db.database.transaction(async (tx) => {
    await assert.rejects(recordMessage(tx, site, entry('C2')), DuplicateMessageError);
    await recordMessage(tx, site, entry('C3'));
  });
  assert.equal((await listMessages(db.database, site)).messages.length, 2);
  // Messages without a control id are never deduplicated.
  await db.database.transaction((tx) => recordMessage(tx, site, entry(undefined)));
  await db.database.transaction((tx) => recordMessage(tx, site, entry(undefined)));
  assert.equal((await listMessages(db.database, site)).messages.length, 4);
});

test('writes passed alongside go out in the same statement, with their parameters renumbered', async () => {
  const site = await createTestSite(db.database);
  const patientId = randomUUID();
  const visit = (number: string) => ({
    name: 'test-visit-insert',
    text: 'INSERT INTO patient_visit (site_id, id, patient_id, visit_number, context) VALUES ($1, gen_random_uuid(), $2, $3, $4)',
    values: [site.siteId, patientId, number, JSON.stringify({ visitNumber: number })],
  });
  await db.database.transaction((tx) => recordMessage(tx, site, entry('A1'), [visit('V1'), visit('V2')]));
  const visits = await db.database.query('SELECT visit_number FROM patient_visit WHERE site_id = $1 ORDER BY visit_number', [site.siteId]);
  assert.deepEqual(visits.rows.map((row) => row.visit_number), ['V1', 'V2']);
  assert.equal((await findLoggedMessage(db.database, site, { protocol: 'hl7v2', sendingApplication: 'LAB', sendingFacility: 'HOSP', controlId: 'A1' }))!.ackText, 'MSH|...|A1');
  // A repeated key still throws; the caller rolls its alongside writes back with the transaction.
  await assert.rejects(db.database.transaction((tx) => recordMessage(tx, site, entry('A1'), [visit('V3')])), DuplicateMessageError);
  assert.equal((await db.database.query('SELECT 1 FROM patient_visit WHERE site_id = $1', [site.siteId])).rowCount, 2);
});

test('listMessages pages newest first and never shows another site; getMessage is site-bound', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  for (let i = 1; i <= 5; i++) await db.database.transaction((tx) => recordMessage(tx, site, entry(`P${i}`)));
  const { id: foreign } = await db.database.transaction((tx) => recordMessage(tx, other, entry('P1')));
  const first = await listMessages(db.database, site, { limit: 2 });
  assert.deepEqual(first.messages.map((m) => m.controlId), ['P5', 'P4']);
  const second = await listMessages(db.database, site, { limit: 2, before: first.nextBefore! });
  assert.deepEqual(second.messages.map((m) => m.controlId), ['P3', 'P2']);
  const third = await listMessages(db.database, site, { limit: 2, before: second.nextBefore! });
  assert.deepEqual(third.messages.map((m) => m.controlId), ['P1']);
  assert.equal(third.nextBefore, undefined);
  assert.equal(await getMessage(db.database, site, foreign), undefined);
  assert.equal((await getMessage(db.database, other, foreign))!.controlId, 'P1');
  assert.equal(await getMessage(db.database, site, 'not-a-uuid'), undefined);
  // A malformed cursor reads from the start rather than failing.
  assert.equal((await listMessages(db.database, site, { before: "1; DROP TABLE x" })).messages.length, 5);
});
