import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { siteActivity } from '../../../src/domain/messages/message-activity.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { seedRecentTraffic } from './support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('counts of the last hour and day, per sender, and a five-minute series; another site\'s traffic is not counted', async () => {
  const now = new Date('2026-05-01T12:00:00Z');
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  await seedRecentTraffic(db.database, site.siteId, now);
  await seedRecentTraffic(db.database, other.siteId, now);
  await db.database.query(`INSERT INTO refused_traffic (site_id, surface, kind, remote_address, reason, suppressed, occurred_at) VALUES ($1, 'http', 'http-api-key-revoked', '127.0.0.1', 'r', 4, $2)`, [site.siteId, now]);
  const activity = await siteActivity(db.database, site, now);
  // seedRecentTraffic: 288 messages, one every five minutes back from now (0 .. 287), of which
  // every tenth errored (AE), six refused; LIS over MLLP for even ones, RIS over HTTP for odd.
  assert.deepEqual(activity.lastDay, { received: 288, accepted: 288 - 29 - 6, errored: 29, refused: 6 });
  assert.deepEqual(activity.lastHour, { received: 13, accepted: 10, errored: 2, refused: 1 });
  assert.equal(activity.refusedTrafficLastDay, 5);
  assert.equal(activity.lastMessageAt, now.toISOString());
  assert.deepEqual(activity.senders.map((s) => [s.sendingApplication, s.transport, s.lastDay.received]), [['LIS', 'mllp', 144], ['RIS', 'http', 144]]);
  assert.equal(activity.series.length, 288);
  assert.equal(activity.series.reduce((sum, point) => sum + point.received, 0), 288);
  assert.equal(activity.series.at(-1)!.at, now.toISOString(), 'the last bucket is the current five minutes');
  assert.ok(activity.series.every((point) => point.received <= 1));
});
