import { resolve } from 'node:path';
import { loadConfig } from '../../config/env.ts';
import { exportSite } from '../../domain/retention/site-export.ts';
import { cancelSitePurge, markSiteForPurge, purgeSite, type OffboardingState } from '../../domain/retention/site-offboarding.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandOptions } from '../command.ts';
import { formatRecord, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

const operator = { kind: 'operator' } as const;

function presentState(state: OffboardingState) {
  return { id: state.siteId, name: state.name, offboarding_marked_at: state.markedAt, purge_after: state.purgeAfter };
}

/** site export SITE --to DIR: the whole site into an empty folder, before offboarding it. */
export async function siteExportCommand(target: string | undefined, options: CommandOptions, json: boolean): Promise<void> {
  if (!target) throw new UsageError('site export needs the site: site export SITE --to DIR');
  const folder = options.optional('to');
  if (!folder?.trim()) throw new UsageError('site export needs the folder to write: site export SITE --to DIR (new or empty)');
  const config = loadConfig();
  const manifest = await withDatabase(async (db) => exportSite(db, await resolveSite(db, target), resolve(folder), config.dicomStorageDir, operator));
  const out = {
    folder: resolve(folder),
    site_id: manifest.site.id,
    name: manifest.site.name,
    snapshot_at: manifest.snapshotAt,
    fhir: manifest.counts.fhir,
    records: manifest.counts.records,
    dicom_files: manifest.counts.dicomFiles,
    dicom_bytes: manifest.counts.dicomBytes,
    dicom_missing: manifest.dicomMissing.length,
  };
  print(out, json, () => `site ${out.name} (${out.site_id}) exported to ${out.folder}\n${formatRecord({ snapshot_at: out.snapshot_at, dicom_files: out.dicom_files, dicom_bytes: out.dicom_bytes, dicom_missing: out.dicom_missing })}\n${formatRecord({ ...out.fhir, ...out.records })}`);
}

/** site offboard SITE [--grace-days N] | --cancel; site purge SITE (docs/data-lifecycle.md#site-offboarding). */
export async function offboardingCommand(action: 'offboard' | 'purge', target: string | undefined, options: CommandOptions, json: boolean): Promise<void> {
  if (!target) throw new UsageError(`site ${action} needs the site: site ${action} SITE`);
  if (action === 'purge') {
    const config = loadConfig();
    const report = await withDatabase(async (db) => purgeSite(db, (await resolveSite(db, target)).id, { dicomStorageDir: config.dicomStorageDir, exportDir: config.bulkExport.dir }, operator));
    const out = { id: report.siteId, name: report.name, deleted: report.deleted };
    print(out, json, () => `site ${report.name} (${report.siteId}) purged\n${formatRecord(report.deleted)}`);
    return;
  }
  const grace = options.optional('grace-days');
  if (options.flag('cancel') && grace !== undefined) throw new UsageError('site offboard takes --grace-days or --cancel, not both');
  if (grace !== undefined && !/^\d{1,3}$/.test(grace.trim())) throw new UsageError('--grace-days must be a whole number of days (1 to 365)');
  const state = await withDatabase(async (db) => {
    const site = await resolveSite(db, target);
    return db.transaction((tx) => (options.flag('cancel') ? cancelSitePurge(tx, site.id, operator) : markSiteForPurge(tx, site.id, grace === undefined ? 30 : Number(grace), operator)));
  });
  const out = presentState(state);
  print(out, json, () => formatRecord(out));
}
