// Data lifecycle, per-site retention of export files and refused-traffic records: what is past a
// site's own retention goes, newer records stay, other sites (and records of no site) keep the
// service-wide values.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cleanUpExports } from '../../../src/domain/bulk-export/export-cleanup.ts';
import { claimExport, completeExport, queueExport, readExport, type ExportJob } from '../../../src/domain/bulk-export/export-jobs.ts';
import { jobFolder } from '../../../src/domain/bulk-export/export-files.ts';
import { RefusedTrafficRecorder, defaultRefusedTrafficBounds } from '../../../src/domain/refused-traffic/recorder.ts';
import { runDataLifecycleOnce } from '../../../src/domain/retention/data-lifecycle-job.ts';
import { purgeRefusedTraffic } from '../../../src/domain/retention/refused-traffic-purge.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { findSiteById, updateSite } from '../../../src/domain/sites/sites.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
let exportDir: string;
before(async () => {
  db = await createTestDatabase();
  exportDir = await mkdtemp(join(tmpdir(), 'cg-site-retention-'));
});
after(async () => {
  await db.drop();
  await rm(exportDir, { recursive: true, force: true });
});

const day = 86_400_000;
const hour = 3_600_000;
const serviceHours = 24;

/** A finished export of the site, with a file on disk, finished `hoursAgo` hours ago. */
async function finishedExport(site: SiteContext, hoursAgo: number): Promise<ExportJob> {
  const queued = (await queueExport(db.database, site, { level: 'system', resourceTypes: ['Patient'], since: undefined, outputFormat: 'application/fhir+ndjson', requestUrl: '/fhir/$export', requestedFrom: '127.0.0.1' }, 100))!;
  const claimed = (await claimExport(db.database, 'retention-test', 60))!;
  assert.equal(claimed.id, queued.id);
  assert.ok(await completeExport(db.database, claimed, 'retention-test', [], serviceHours));
  await mkdir(jobFolder(exportDir, site.siteId, claimed.id), { recursive: true });
  await writeFile(join(jobFolder(exportDir, site.siteId, claimed.id), 'Patient-1.ndjson'), '{}\n');
  await db.database.query(
    `UPDATE bulk_export_job SET finished_at = finished_at - make_interval(secs => $3), expires_at = expires_at - make_interval(secs => $3) WHERE site_id = $1 AND id = $2`,
    [site.siteId, claimed.id, hoursAgo * 3600],
  );
  return (await readExport(db.database, site.siteId, claimed.id))!;
}

const kept = async (site: SiteContext, job: ExportJob) => (await readExport(db.database, site.siteId, job.id)) !== undefined && existsSync(jobFolder(exportDir, site.siteId, job.id));

test('export files: a site\'s own retention sets the expiry, applies to exports already finished, and the clean-up removes only what is past it', async () => {
  const short = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  await updateSite(db.database, short.siteId, { exportRetentionHours: 2 }, { kind: 'operator' });
  const fresh = await finishedExport(short, 0);
  assert.ok(Math.abs(fresh.expiresAt!.getTime() - fresh.finishedAt!.getTime() - 2 * hour) < 60_000, 'completed with the site\'s 2 hours');
  const old = await finishedExport(short, 3);
  const newer = await finishedExport(short, 1);
  const othersOld = await finishedExport(other, 3);
  assert.ok(Math.abs(othersOld.expiresAt!.getTime() - othersOld.finishedAt!.getTime() - serviceHours * hour) < 60_000, 'another site keeps the service-wide hours');

  const result = await cleanUpExports(db.database.pool, exportDir);
  assert.equal(result.expired, 1);
  assert.equal(await kept(short, old), false);
  assert.equal(await kept(short, newer), true);
  assert.equal(await kept(short, fresh), true);
  assert.equal(await kept(other, othersOld), true);

  // Shortening it moves the expiry of exports already finished: the newer one goes too.
  await updateSite(db.database, short.siteId, { exportRetentionHours: 1 }, { kind: 'operator' });
  assert.equal((await cleanUpExports(db.database.pool, exportDir)).expired, 1);
  assert.equal(await kept(short, newer), false);
  assert.equal(await kept(short, fresh), true);
  assert.equal(await kept(other, othersOld), true);

  await updateSite(db.database, short.siteId, { exportRetentionHours: null }, { kind: 'operator' });
  assert.equal((await findSiteById(db.database, short.siteId))!.exportRetentionHours, null);
  for (const hours of [0, 8761, 1.5]) {
    await assert.rejects(updateSite(db.database, short.siteId, { exportRetentionHours: hours }, { kind: 'operator' }), /export file retention must be 1 to 8760 hours/);
  }
});

async function refusal(siteId: string | null, daysAgo: number, now = Date.now()): Promise<string> {
  const { rows } = await db.database.query<{ id: string }>(
    `INSERT INTO refused_traffic (site_id, surface, kind, remote_address, reason, occurred_at, last_at)
     VALUES ($1, 'mllp', 'mllp-address-not-admitted', '192.0.2.7', 'test', $2, $2) RETURNING id::text AS id`,
    [siteId, new Date(now - daysAgo * day)],
  );
  return rows[0]!.id;
}

async function remaining(ids: string[]): Promise<string[]> {
  const { rows } = await db.database.query<{ id: string }>('SELECT id::text AS id FROM refused_traffic WHERE id = ANY($1::bigint[]) ORDER BY id', [ids]);
  return rows.map((row) => row.id);
}

test('refused traffic: the lifecycle purge removes a site\'s records past its retention in batches; newer ones, other sites and records of no site stay', async () => {
  const limited = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  await updateSite(db.database, limited.siteId, { refusedTrafficRetentionDays: 10 }, { kind: 'operator' });
  const old: string[] = [];
  for (let i = 0; i < 5; i++) old.push(await refusal(limited.siteId, 11 + i));
  const newer = await refusal(limited.siteId, 9);
  const othersOld = await refusal(other.siteId, 20);
  const noSite = await refusal(null, 20);

  assert.deepEqual(await purgeRefusedTraffic(db.database, { batchSize: 2, pauseMs: 0, siteId: limited.siteId }), [{ siteId: limited.siteId, purged: 5 }]);
  assert.deepEqual(await remaining([...old, newer, othersOld, noSite]), [newer, othersOld, noSite]);

  // The hourly job runs the same purge.
  const older = await refusal(limited.siteId, 12);
  const run = await runDataLifecycleOnce(db.database, { pauseMs: 0 });
  assert.deepEqual(run!.refusalsPurged, [{ siteId: limited.siteId, purged: 1 }]);
  assert.deepEqual(await remaining([older, newer, othersOld, noSite]), [newer, othersOld, noSite]);

  for (const days of [0, 3651]) {
    await assert.rejects(updateSite(db.database, limited.siteId, { refusedTrafficRetentionDays: days }, { kind: 'operator' }), /refused traffic retention must be 1 to 3650 days/);
  }
});

test('refused traffic: the recorder\'s own 30-day purge leaves the records of a site that keeps them longer', async () => {
  const longer = await createTestSite(db.database);
  const usual = await createTestSite(db.database);
  await updateSite(db.database, longer.siteId, { refusedTrafficRetentionDays: 90 }, { kind: 'operator' });
  const longersOld = await refusal(longer.siteId, 40);
  const usualOld = await refusal(usual.siteId, 40);
  const noSiteOld = await refusal(null, 40);
  const usualNew = await refusal(usual.siteId, 1);

  const recorder = new RefusedTrafficRecorder(db.database, { ...defaultRefusedTrafficBounds, purgeEveryMs: 0 });
  recorder.record({ siteId: usual.siteId, surface: 'mllp', kind: 'mllp-address-not-admitted', remoteAddress: '192.0.2.8', reason: 'test' });
  await recorder.settle();
  assert.deepEqual(await remaining([longersOld, usualOld, noSiteOld, usualNew]), [longersOld, usualNew]);
});
