import { loadConfig } from '../../config/env.ts';
import { cancelExport } from '../../domain/bulk-export/cancel-export.ts';
import { removeJobFiles } from '../../domain/bulk-export/export-files.ts';
import { listExports, type ExportListEntry } from '../../domain/bulk-export/export-jobs.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandContext } from '../command.ts';
import { formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

function present(job: ExportListEntry) {
  return {
    id: job.id,
    level: job.level,
    resource_types: job.resourceTypes,
    state: job.state,
    created_at: job.createdAt,
    finished_at: job.finishedAt,
    expires_at: job.expiresAt,
    resource_count: job.progressCount,
    files: job.output.length,
    requested_by: job.requestedByEmail ?? job.requestedByUser,
    error: job.error,
  };
}

/** exports list / cancel: a site's FHIR Bulk Data exports, as the admin app's Exports page. */
export async function exportsCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'cancel') {
    const exportId = positionals[0];
    if (!exportId) throw new UsageError('exports cancel needs the export id: exports cancel EXPORT_ID --site SITE');
    const siteId = await withDatabase(async (db) => {
      const site = await resolveSite(db, options.required('site'));
      await db.transaction((tx) => cancelExport(tx, site.id, exportId, { kind: 'operator' }));
      return site.id;
    });
    await removeJobFiles(loadConfig().bulkExport.dir, siteId, exportId);
    print({ id: exportId, deleted: true }, json, () => `cancelled and deleted export ${exportId}`);
    return;
  }
  const jobs = await withDatabase(async (db) => listExports(db, (await resolveSite(db, options.required('site'))).id));
  const rows = jobs.map(present);
  print(rows, json, () => formatTable(rows, ['id', 'level', 'state', 'created_at', 'finished_at', 'resource_count', 'files', 'requested_by']));
}
