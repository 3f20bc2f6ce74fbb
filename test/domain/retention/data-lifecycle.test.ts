// Data lifecycle, retention: message bodies past a site's retention are purged (the entry, outcome
// and acknowledgement stay), newer ones and other sites' are untouched; the job runs on one node
// at a time; each site's storage use is counted right.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { indexInstance } from '../../../src/domain/imaging/index-instance.ts';
import { getMessage, recordMessage } from '../../../src/domain/messages/message-log.ts';
import { runDataLifecycleOnce } from '../../../src/domain/retention/data-lifecycle-job.ts';
import { purgeMessageBodies } from '../../../src/domain/retention/message-body-purge.ts';
import { readStorageUsage, refreshStorageUsage } from '../../../src/domain/retention/storage-usage.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { updateSite } from '../../../src/domain/sites/sites.ts';
import { Database } from '../../../src/storage/database.ts';
import { onceAcrossNodes, runIfNoOtherNodeIs } from '../../../src/storage/once-across-nodes.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance } from '../imaging/fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const day = 86_400_000;
const now = new Date('2026-06-01T12:00:00Z');

/** Logs a message received `daysAgo` days before `now`; returns its id. */
async function logMessage(site: SiteContext, daysAgo: number, body = `MSH|^~\\&|LAB|HOSP|||x||ADT^A01|C${Math.random()}|P|2.5.1`): Promise<string> {
  const { id } = await db.database.transaction((tx) =>
    recordMessage(tx, site, {
      protocol: 'hl7v2',
      transport: 'mllp',
      sendingApplication: 'LAB',
      sendingFacility: 'HOSP',
      controlId: `C-${Math.random().toString(36).slice(2)}`,
      messageType: 'ADT^A01',
      outcome: 'processed',
      ackCode: 'AA',
      problems: [],
      ackText: 'MSH|ack',
      raw: Buffer.from(body),
      receivedAt: new Date(now.getTime() - daysAgo * day),
    }),
  );
  return id;
}

async function bodies(site: SiteContext): Promise<{ kept: number; purged: number }> {
  const { rows } = await db.database.query<{ kept: number; purged: number }>(
    `SELECT count(*) FILTER (WHERE raw IS NOT NULL AND body_purged_at IS NULL)::int AS kept,
            count(*) FILTER (WHERE raw IS NULL AND body_purged_at IS NOT NULL)::int AS purged
       FROM inbound_message WHERE site_id = $1`,
    [site.siteId],
  );
  return rows[0]!;
}

test('bodies older than the site\'s retention are purged in batches; newer ones, the entries and other sites stay', async () => {
  const limited = await createTestSite(db.database);
  const forever = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  await updateSite(db.database, limited.siteId, { messageBodyRetentionDays: 30 }, { kind: 'operator' });
  await updateSite(db.database, other.siteId, { messageBodyRetentionDays: 365 }, { kind: 'operator' });
  const old: string[] = [];
  for (let i = 0; i < 7; i++) old.push(await logMessage(limited, 31 + i));
  const recent = await logMessage(limited, 29);
  for (let i = 0; i < 3; i++) await logMessage(forever, 400 + i);
  for (let i = 0; i < 3; i++) await logMessage(other, 100 + i);

  // Batches of 3: 7 old bodies take three transactions.
  const purges = await purgeMessageBodies(db.database, { batchSize: 3, pauseMs: 0, now });
  assert.deepEqual(purges, [{ siteId: limited.siteId, purged: 7 }]);
  assert.deepEqual(await bodies(limited), { kept: 1, purged: 7 });
  assert.deepEqual(await bodies(forever), { kept: 3, purged: 0 });
  assert.deepEqual(await bodies(other), { kept: 3, purged: 0 });

  const purged = await getMessage(db.database, limited, old[0]!);
  assert.equal(purged!.raw, null);
  assert.ok(purged!.bodyPurgedAt);
  assert.equal(purged!.ackText, 'MSH|ack');
  assert.equal(purged!.outcome, 'processed');
  assert.ok((await getMessage(db.database, limited, recent))!.raw);

  // A second run finds nothing more; shortening the retention purges the rest.
  assert.deepEqual(await purgeMessageBodies(db.database, { batchSize: 3, pauseMs: 0, now }), []);
  await updateSite(db.database, limited.siteId, { messageBodyRetentionDays: 1 }, { kind: 'operator' });
  assert.deepEqual(await purgeMessageBodies(db.database, { pauseMs: 0, now, siteId: limited.siteId }), [{ siteId: limited.siteId, purged: 1 }]);
  // Back to "for ever": nothing more is purged.
  await updateSite(db.database, limited.siteId, { messageBodyRetentionDays: null }, { kind: 'operator' });
  await logMessage(limited, 5000);
  assert.deepEqual(await purgeMessageBodies(db.database, { pauseMs: 0, now, siteId: limited.siteId }), []);
});

test('a retention outside 1 to 36500 days is refused', async () => {
  const site = await createTestSite(db.database);
  for (const days of [0, -1, 36501, 1.5]) {
    await assert.rejects(updateSite(db.database, site.siteId, { messageBodyRetentionDays: days }, { kind: 'operator' }), /message body retention must be 1 to 36500 days/);
  }
});

test('the job runs on one node at a time: another node holding the lock makes it skip its turn', async () => {
  const otherNode = new Database({ connectionString: db.connectionString, maxConnections: 2 });
  try {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const holding = new Promise<void>((resolve) => (started = resolve));
    const running = runIfNoOtherNodeIs(otherNode, onceAcrossNodes.dataLifecycle, async () => {
      started();
      await held;
      return 'other node';
    });
    await holding;
    assert.equal(await runDataLifecycleOnce(db.database, { pauseMs: 0 }), undefined);
    release();
    assert.equal(await running, 'other node');
    const ran = await runDataLifecycleOnce(db.database, { pauseMs: 0 });
    assert.ok(ran && ran.usageRows > 0);
  } finally {
    await otherNode.close();
  }
});

test('storage use: rows and bytes per table and DICOM bytes of each site, from the stored figures', async () => {
  const site = await createTestSite(db.database);
  const empty = await createTestSite(db.database);
  const bodiesOf = ['A'.repeat(1000), 'B'.repeat(2000), 'C'.repeat(3000)];
  for (const body of bodiesOf) await logMessage(site, 1, body);
  await db.database.transaction(async (tx) => {
    await indexInstance(tx, site, receivedInstance({ sizeBytes: 1_000_000 }));
    await indexInstance(tx, site, receivedInstance({ sizeBytes: 234_567 }));
  });
  const before = await readStorageUsage(db.database, site.siteId);
  assert.equal(before.computedAt, null);
  assert.equal(before.databaseRows, 0);

  await refreshStorageUsage(db.database);
  const usage = await readStorageUsage(db.database, site.siteId);
  assert.ok(usage.computedAt instanceof Date);
  assert.equal(usage.dicomInstances, 2);
  assert.equal(usage.dicomBytes, 1_234_567);
  const messages = usage.items.find((item) => item.item === 'inbound_message')!;
  assert.equal(messages.rows, 3);
  // The figure is the rows as stored (PostgreSQL compresses long repeated text), counted independently here.
  const { rows } = await db.database.query<{ bytes: string }>('SELECT sum(pg_column_size(t.*))::bigint AS bytes FROM inbound_message t WHERE site_id = $1', [site.siteId]);
  assert.equal(messages.bytes, Number(rows[0]!.bytes));
  assert.equal(usage.items.find((item) => item.item === 'imaging_instance')!.rows, 2);
  assert.equal(usage.items.find((item) => item.item === 'imaging_study')!.rows, 2);
  assert.equal(usage.databaseRows, usage.items.filter((item) => item.item !== 'dicom-files').reduce((sum, item) => sum + item.rows, 0));
  assert.ok(usage.databaseBytes > messages.bytes);
  // Another site's figures hold none of these rows.
  const none = await readStorageUsage(db.database, empty.siteId);
  assert.equal(none.dicomBytes, 0);
  assert.equal(none.items.find((item) => item.item === 'inbound_message'), undefined);
});
