/**
 * Deletes exports past their expiry (CG_EXPORT_RETENTION_HOURS after they finished), files
 * first, then the job; and folders whose job no longer exists (a cancel whose file deletion was
 * interrupted). One node at a time: the clean-up holds a PostgreSQL advisory lock while it runs,
 * and a node that cannot take it skips this round.
 */
import type pg from 'pg';
import { jobFoldersOnDisk, removeJobFiles } from './export-files.ts';
import { deleteExport, existingExportIds, expiredExports } from './export-jobs.ts';

/** pg_try_advisory_lock key of the export clean-up ("bulkexp" in ASCII). */
const cleanupLockKey = 0x62756c6b657870n;

export interface ExportCleanupResult {
  /** False when another node was cleaning up. */
  ran: boolean;
  expired: number;
  orphanFolders: number;
}

export async function cleanUpExports(pool: pg.Pool, dir: string): Promise<ExportCleanupResult> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [cleanupLockKey.toString()]);
    if (!rows[0]?.locked) return { ran: false, expired: 0, orphanFolders: 0 };
    try {
      let expired = 0;
      for (;;) {
        const batch = await expiredExports(client, 100);
        for (const job of batch) {
          await removeJobFiles(dir, job.siteId, job.id);
          if (await deleteExport(client, job.siteId, job.id)) expired++;
        }
        if (batch.length < 100) break;
      }
      let orphanFolders = 0;
      const known = new Map<string, Set<string>>();
      for (const folder of await jobFoldersOnDisk(dir)) {
        let ids = known.get(folder.siteId);
        if (!ids) known.set(folder.siteId, (ids = await existingExportIds(client, folder.siteId)));
        // A folder is made only once its job's row exists, so a folder without a row is left over.
        if (ids.has(folder.jobId)) continue;
        await removeJobFiles(dir, folder.siteId, folder.jobId);
        orphanFolders++;
      }
      return { ran: true, expired, orphanFolders };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [cleanupLockKey.toString()]);
    }
  } finally {
    client.release();
  }
}
