// The refused-traffic recorder's bounds: a flood from one address is one row a minute with a
// counter; many addresses are capped per minute; rows past the cap or the retention are deleted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listRefusedTraffic } from '../../../src/domain/refused-traffic/refused-traffic.ts';
import { defaultRefusedTrafficBounds, RefusedTrafficRecorder } from '../../../src/domain/refused-traffic/recorder.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const count = async () => (await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM refused_traffic')).rows[0]!.n;

test('a flood of 5,000 refusals from one address in a minute is one row counting the rest', async () => {
  await db.database.query('DELETE FROM refused_traffic');
  const site = await createTestSite(db.database);
  const recorder = new RefusedTrafficRecorder(db.database, { ...defaultRefusedTrafficBounds, windowMs: 3_600_000 });
  let written = 0;
  for (let i = 0; i < 5_000; i++) {
    if (recorder.record({ siteId: site.siteId, surface: 'http', kind: 'http-api-key-revoked', remoteAddress: '127.0.0.5', reason: 'the API key has been revoked', details: { key_prefix: 'cg_0123456789ab' } })) written++;
  }
  await recorder.settle();
  assert.equal(written, 1);
  const { entries } = await listRefusedTraffic(db.database, { siteId: site.siteId });
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.suppressed, 4_999);
  assert.deepEqual(entries[0]!.details, { key_prefix: 'cg_0123456789ab' });
  // Another kind or another address is a row of its own.
  recorder.record({ siteId: site.siteId, surface: 'http', kind: 'http-api-key-unknown', remoteAddress: '127.0.0.5', reason: 'x' });
  recorder.record({ siteId: site.siteId, surface: 'http', kind: 'http-api-key-revoked', remoteAddress: '127.0.0.6', reason: 'x' });
  await recorder.settle();
  assert.equal((await listRefusedTraffic(db.database, { siteId: site.siteId })).entries.length, 3);
});

test('many addresses in one minute stop at the per-minute row budget; the rest are only counted', async () => {
  await db.database.query('DELETE FROM refused_traffic');
  const recorder = new RefusedTrafficRecorder(db.database, { ...defaultRefusedTrafficBounds, windowMs: 3_600_000, maxKeysPerWindow: 50 });
  for (let i = 0; i < 1_000; i++) recorder.record({ surface: 'dicom', kind: 'dicom-called-ae-unknown', remoteAddress: `127.1.${i >> 8}.${i & 255}`, reason: 'called AE title not recognised' });
  await recorder.settle();
  assert.equal(await count(), 50);
  assert.equal(recorder.overflow, 950);
});

test('rows beyond the cap and past the retention are deleted as new ones are written', async () => {
  await db.database.query('DELETE FROM refused_traffic');
  await db.database.query(
    `INSERT INTO refused_traffic (surface, kind, remote_address, reason, occurred_at) VALUES ('mllp', 'mllp-address-not-admitted', '127.0.0.9', 'old', now() - interval '40 days')`,
  );
  const recorder = new RefusedTrafficRecorder(db.database, { ...defaultRefusedTrafficBounds, windowMs: 3_600_000, maxRows: 100 });
  for (let i = 0; i < 300; i++) recorder.record({ surface: 'mllp', kind: 'mllp-address-not-admitted', remoteAddress: `127.2.${i >> 8}.${i & 255}`, reason: 'no integration client admits this address' });
  await recorder.settle();
  assert.ok((await count()) <= 110, `${await count()} rows`);
  assert.equal((await db.database.query(`SELECT count(*)::int AS n FROM refused_traffic WHERE reason = 'old'`)).rows[0]!.n, 0);
});
