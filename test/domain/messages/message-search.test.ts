import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { recordMessage, type NewMessage } from '../../../src/domain/messages/message-log.ts';
import { countBound, searchMessages } from '../../../src/domain/messages/message-search.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const entry = (controlId: string, receivedAt: string, overrides: Partial<NewMessage> = {}): NewMessage => ({
  protocol: 'hl7v2',
  transport: 'mllp',
  sendingApplication: 'LAB',
  sendingFacility: 'HOSP',
  controlId,
  messageType: 'ADT^A01',
  outcome: 'processed',
  ackCode: 'AA',
  problems: [],
  ackText: 'MSH|',
  raw: Buffer.from('MSH|'),
  receivedAt: new Date(receivedAt),
  ...overrides,
});

test('filters narrow the log, each alone and together, and never reach another site', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  await db.database.transaction(async (tx) => {
    await recordMessage(tx, site, entry('A1', '2026-03-01T08:00:00Z', { patientIdentifier: 'MRN1' }));
    await recordMessage(tx, site, entry('A2', '2026-03-01T09:00:00Z', { messageType: 'ORU^R01', patientIdentifier: 'MRN2', transport: 'http' }));
    await recordMessage(tx, site, entry('A3', '2026-03-02T10:00:00Z', { outcome: 'error', ackCode: 'AE', sendingFacility: 'CLINIC' }));
    await recordMessage(tx, site, entry('A4', '2026-03-03T11:00:00Z', { outcome: 'rejected', ackCode: 'AR', sendingApplication: 'RIS' }));
    await recordMessage(tx, other, entry('A3', '2026-03-02T10:00:00Z', { outcome: 'error', ackCode: 'AE' }));
  });
  const ids = async (query: Parameters<typeof searchMessages>[2]) => (await searchMessages(db.database, site, query)).messages.map((m) => m.controlId);
  assert.deepEqual(await ids({}), ['A4', 'A3', 'A2', 'A1']);
  assert.deepEqual(await ids({ sort: 'oldest' }), ['A1', 'A2', 'A3', 'A4']);
  assert.deepEqual(await ids({ outcome: 'error' }), ['A3']);
  assert.deepEqual(await ids({ outcome: 'rejected' }), ['A4']);
  assert.deepEqual(await ids({ outcome: 'processed' }), ['A2', 'A1']);
  assert.deepEqual(await ids({ messageType: 'ORU^R01' }), ['A2']);
  assert.deepEqual(await ids({ controlId: 'A3' }), ['A3']);
  assert.deepEqual(await ids({ patientIdentifier: 'MRN1' }), ['A1']);
  assert.deepEqual(await ids({ sender: 'CLINIC' }), ['A3']);
  assert.deepEqual(await ids({ sender: 'RIS' }), ['A4']);
  assert.deepEqual(await ids({ transport: 'http' }), ['A2']);
  assert.deepEqual(await ids({ from: new Date('2026-03-01T09:00:00Z'), to: new Date('2026-03-03T00:00:00Z') }), ['A3', 'A2']);
  assert.deepEqual(await ids({ transport: 'mllp', outcome: 'processed' }), ['A1']);
  const page = await searchMessages(db.database, site, { outcome: 'error' });
  assert.equal(page.total, 1);
  assert.equal(page.totalExact, true);
});

test('keyset pages follow each other in both orders; a jump starts at the instant', async () => {
  const site = await createTestSite(db.database);
  await db.database.transaction(async (tx) => {
    for (let i = 0; i < 7; i++) await recordMessage(tx, site, entry(`K${i}`, `2026-04-0${i + 1}T12:00:00.123456Z`));
    // Two at the very same instant: seq tells them apart, so neither is skipped nor repeated.
    await recordMessage(tx, site, entry('K7', '2026-04-07T12:00:00.123456Z'));
  });
  const all: string[] = [];
  let after: string | undefined;
  do {
    const page = await searchMessages(db.database, site, { limit: 3, ...(after ? { after } : {}) });
    all.push(...page.messages.map((m) => m.controlId!));
    assert.equal(page.total, 8);
    after = page.next;
  } while (after);
  assert.deepEqual(all, ['K7', 'K6', 'K5', 'K4', 'K3', 'K2', 'K1', 'K0']);
  const oldest = await searchMessages(db.database, site, { sort: 'oldest', limit: 3 });
  const second = await searchMessages(db.database, site, { sort: 'oldest', limit: 3, after: oldest.next! });
  assert.deepEqual(second.messages.map((m) => m.controlId), ['K3', 'K4', 'K5']);
  const jump = await searchMessages(db.database, site, { at: new Date('2026-04-03T23:00:00Z'), limit: 2 });
  assert.deepEqual(jump.messages.map((m) => m.controlId), ['K2', 'K1']);
  const forward = await searchMessages(db.database, site, { at: new Date('2026-04-03T23:00:00Z'), sort: 'oldest', limit: 2 });
  assert.deepEqual(forward.messages.map((m) => m.controlId), ['K3', 'K4']);
  // A cursor of another shape is ignored, never interpolated.
  assert.equal((await searchMessages(db.database, site, { after: "1; DROP TABLE x" })).messages.length, 8);
});

test(`the total is exact up to ${countBound} and says "more" past it`, async () => {
  const site = await createTestSite(db.database);
  await db.database.query(
    `INSERT INTO inbound_message (site_id, id, protocol, transport, control_id, message_type, outcome, ack_code, ack_text, raw, received_at)
     SELECT $1, gen_random_uuid(), 'hl7v2', 'mllp', 'T' || i, 'ADT^A01', 'processed', 'AA', '', '\\x00', now() - i * interval '1 second'
       FROM generate_series(1, $2::int) AS i`,
    [site.siteId, countBound + 5],
  );
  const page = await searchMessages(db.database, site, { limit: 1 });
  assert.equal(page.total, countBound);
  assert.equal(page.totalExact, false);
  assert.equal((await searchMessages(db.database, site, { controlId: 'T7' })).total, 1);
});
