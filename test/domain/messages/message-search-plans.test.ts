// A log of a million messages, made in SQL with generate_series, and the plan of every query the
// search sends (EXPLAIN, without running it): each filter and each page reads an index of the log,
// never the whole table. Plans, not timings: the machine is shared and timings are not evidence.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { QueryResult, QueryResultRow } from 'pg';
import { searchMessages, type MessageQuery } from '../../../src/domain/messages/message-search.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import type { Queryable } from '../../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

const rows = 1_000_000;
let db: TestDatabase;
let site: SiteContext;

before(async () => {
  db = await createTestDatabase();
  site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  // One message a second or so over twelve days; about 1 in 1,000 failed (AE), 1 in 2,000
  // rejected (AR); twenty senders, three types, fifty thousand patients.
  const fill = (siteId: string, count: number) =>
    db.database.query(
      `INSERT INTO inbound_message (site_id, id, protocol, transport, sending_application, sending_facility, control_id,
              message_type, outcome, ack_code, ack_text, raw, received_at, patient_identifier)
       SELECT $1, gen_random_uuid(), 'hl7v2', CASE WHEN i % 3 = 0 THEN 'http' ELSE 'mllp' END,
              'APP' || (i % 20), 'FAC' || (i % 5), 'MSG' || i,
              (ARRAY['ADT^A01', 'ADT^A08', 'ORU^R01'])[1 + i % 3],
              CASE WHEN i % 1000 = 7 THEN 'error' WHEN i % 2000 = 11 THEN 'rejected' ELSE 'processed' END,
              CASE WHEN i % 1000 = 7 THEN 'AE' WHEN i % 2000 = 11 THEN 'AR' ELSE 'AA' END,
              'MSA|AA', '\\x4d5348', timestamptz '2026-01-01T00:00:00Z' + i * interval '1 second', 'MRN' || (i % 50000)
         FROM generate_series(1, $2::int) AS i`,
      [siteId, count],
    );
  await fill(site.siteId, rows);
  await fill(other.siteId, 20_000);
  await db.database.query('ANALYZE inbound_message');
});
after(() => db.drop());

/** Runs the search against a Queryable that keeps each statement, then EXPLAINs each one. */
async function plansOf(query: MessageQuery): Promise<string[]> {
  const sent: { text: string; values: unknown[] }[] = [];
  const recording: Queryable = {
    query: (async (text: string | { text: string; values?: unknown[] }, values?: unknown[]) => {
      const statement = typeof text === 'string' ? { text, values: values ?? [] } : { text: text.text, values: text.values ?? [] };
      sent.push(statement);
      return db.database.query(statement.text, statement.values);
    }) as unknown as Queryable['query'],
  };
  await searchMessages(recording, site, query);
  const plans: string[] = [];
  for (const statement of sent) {
    const explained: QueryResult<QueryResultRow> = await db.database.query(`EXPLAIN ${statement.text}`, statement.values);
    plans.push(explained.rows.map((row) => row['QUERY PLAN']).join('\n'));
  }
  return plans;
}

const cases: [string, MessageQuery][] = [
  ['the newest page', {}],
  ['the oldest page', { sort: 'oldest' }],
  ['a page deep in the log (keyset)', { after: `${Date.parse('2026-01-06T00:00:00Z') * 1000}:432000` }],
  ['a jump to a date', { at: new Date('2026-01-05T12:00:00Z') }],
  ['a time range', { from: new Date('2026-01-03T00:00:00Z'), to: new Date('2026-01-03T01:00:00Z') }],
  ['failed messages (AE)', { outcome: 'error' }],
  ['rejected messages (AR), oldest first', { outcome: 'rejected', sort: 'oldest' }],
  ['a message type', { messageType: 'ORU^R01' }],
  ['a control id', { controlId: 'MSG123456' }],
  ['a patient identifier', { patientIdentifier: 'MRN4242' }],
  ['a sender (MSH-3 or MSH-4)', { sender: 'APP7' }],
  ['a transport within a day', { transport: 'http', from: new Date('2026-01-04T00:00:00Z'), to: new Date('2026-01-05T00:00:00Z') }],
  ['failed messages of one sender in a week', { outcome: 'error', sender: 'FAC2', from: new Date('2026-01-02T00:00:00Z'), to: new Date('2026-01-09T00:00:00Z') }],
];

for (const [name, query] of cases) {
  test(`${name}: every statement reads an index, none scans the whole log`, { timeout: 120_000 }, async () => {
    const plans = await plansOf(query);
    assert.equal(plans.length, 2, 'a page and its bounded total');
    for (const plan of plans) {
      assert.doesNotMatch(plan, /Seq Scan on inbound_message/, plan);
      assert.match(plan, /Index (Only )?Scan|Bitmap Index Scan/, plan);
    }
  });
}

test('the searches answer over the million rows with the right messages', { timeout: 120_000 }, async () => {
  const failed = await searchMessages(db.database, site, { outcome: 'error', limit: 5 });
  assert.equal(failed.total, 1000);
  assert.equal(failed.totalExact, true);
  assert.ok(failed.messages.every((m) => m.ackCode === 'AE'));
  const all = await searchMessages(db.database, site, { limit: 1 });
  assert.equal(all.totalExact, false);
  const one = await searchMessages(db.database, site, { controlId: 'MSG123457' });
  assert.deepEqual(one.messages.map((m) => m.outcome), ['processed']);
  assert.equal((await searchMessages(db.database, site, { patientIdentifier: 'MRN4242' })).total, 20);
});
