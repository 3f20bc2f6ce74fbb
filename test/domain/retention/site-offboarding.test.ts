// Data lifecycle, site offboarding: a site is marked, then purged once its grace period has
// passed; afterwards no table of the catalogue holds a row of it, its DICOM folder is gone, the
// purge is audited, and another site filled the same way is untouched.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runDataLifecycleOnce } from '../../../src/domain/retention/data-lifecycle-job.ts';
import { cancelSitePurge, markSiteForPurge, purgeSite } from '../../../src/domain/retention/site-offboarding.ts';
import { refreshStorageUsage } from '../../../src/domain/retention/storage-usage.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createTestSite } from '../../support/sites.ts';
import { useFilledSites } from './filled-sites.ts';

const filled = useFilledSites();
const fill = (site: SiteContext, address: string) => filled.fill(site, address);

const operator = { kind: 'operator' } as const;
const folders = () => ({ dicomStorageDir: filled.services.config.dicomStorageDir, exportDir: filled.services.config.bulkExport.dir });

/** Rows of the site in every table with a site_id column, read from the catalogue. */
async function rowsPerTable(siteId: string): Promise<Record<string, number>> {
  const { rows: tables } = await filled.db.database.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'site_id' AND NOT a.attisdropped
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const { rows } = await filled.db.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}" WHERE site_id = $1`, [siteId]);
    counts[name] = rows[0]!.n;
  }
  const { rows: sessions } = await filled.db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM admin_session s JOIN app_user u ON u.id = s.user_id WHERE u.site_id = $1', [siteId]);
  counts.admin_session = sessions[0]!.n;
  const { rows: site } = await filled.db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM site WHERE id = $1', [siteId]);
  counts.site = site[0]!.n;
  return counts;
}

test('a marked site is purged after its grace period: no row of it in any table, its DICOM folder gone, audited; the other site untouched', { timeout: 120_000 }, async () => {
  const leaving = await createTestSite(filled.db.database);
  const staying = await createTestSite(filled.db.database);
  await fill(leaving, '127.0.0.1');
  await fill(staying, '127.0.0.2');
  await refreshStorageUsage(filled.db.database);

  const before = await rowsPerTable(leaving.siteId);
  // Every table holds something of the site, so the check after the purge checks every table.
  assert.deepEqual(Object.entries(before).filter(([, n]) => n === 0).map(([table]) => table), [], 'tables the fill left empty');
  const staysBefore = await rowsPerTable(staying.siteId);
  assert.ok(existsSync(join(filled.services.config.dicomStorageDir, leaving.siteId)));

  // Not marked, then marked but within the grace period: refused.
  await assert.rejects(purgeSite(filled.db.database, leaving.siteId, folders(), operator), /not marked for offboarding/);
  const marked = await markSiteForPurge(filled.db.database, leaving.siteId, 30, operator);
  assert.ok(marked.purgeAfter && marked.purgeAfter.getTime() > Date.now() + 29 * 86_400_000);
  await assert.rejects(purgeSite(filled.db.database, leaving.siteId, folders(), operator), /grace period lasts until/);
  // Cancelling unmarks; the job purges nothing before the grace period ends.
  assert.equal((await cancelSitePurge(filled.db.database, leaving.siteId, operator)).purgeAfter, null);
  await markSiteForPurge(filled.db.database, leaving.siteId, 1, operator);
  assert.deepEqual((await runDataLifecycleOnce(filled.db.database, { pauseMs: 0, folders: folders() }))!.sitesPurged, []);

  const report = await purgeSite(filled.db.database, leaving.siteId, folders(), operator, { now: new Date(Date.now() + 2 * 86_400_000) });
  assert.ok(report.deleted.clinical_resource! > 0 && report.deleted.imaging_instance! > 0);

  const afterPurge = await rowsPerTable(leaving.siteId);
  assert.deepEqual(Object.entries(afterPurge).filter(([, n]) => n > 0), [], 'rows of the purged site left behind');
  assert.equal(existsSync(join(filled.services.config.dicomStorageDir, leaving.siteId)), false);
  assert.deepEqual(await rowsPerTable(staying.siteId), staysBefore);
  assert.ok(existsSync(join(filled.services.config.dicomStorageDir, staying.siteId)));
  const { rows: audit } = await filled.db.database.query<{ site_id: string | null; details: { name: string } }>(
    "SELECT site_id, details FROM audit_event WHERE action = 'site.purged' AND target_id = $1",
    [leaving.siteId],
  );
  assert.equal(audit.length, 1);
  assert.equal(audit[0]!.site_id, null);
  assert.equal(audit[0]!.details.name, leaving.siteName);
});

test('the background job purges a site whose grace period has passed, rows pointing at the site under another name included', async () => {
  const site = await createTestSite(filled.db.database);
  // A table added later that names its site otherwise than site_id (found by its foreign key).
  await filled.db.database.query('CREATE TABLE IF NOT EXISTS site_note (about_site uuid NOT NULL REFERENCES site (id), note text)');
  await filled.db.database.query("INSERT INTO site_note VALUES ($1, 'leaving')", [site.siteId]);
  await markSiteForPurge(filled.db.database, site.siteId, 1, operator);
  await filled.db.database.query("UPDATE site SET purge_after = now() - interval '1 minute' WHERE id = $1", [site.siteId]);
  const run = await runDataLifecycleOnce(filled.db.database, { pauseMs: 0, folders: folders() });
  assert.deepEqual(run!.sitesPurged.map((purge) => purge.siteId), [site.siteId]);
  assert.equal((await rowsPerTable(site.siteId)).site, 0);
  assert.equal(run!.sitesPurged[0]!.deleted.site_note, 1);
  await filled.db.database.query('DROP TABLE site_note');
});

test('a grace period outside 1 to 365 days is refused', async () => {
  const site = await createTestSite(filled.db.database);
  for (const days of [0, 366, 2.5]) await assert.rejects(markSiteForPurge(filled.db.database, site.siteId, days, operator), /grace period must be 1 to 365 days/);
});
