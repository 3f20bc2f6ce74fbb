import { resolve } from 'node:path';
import { loadConfig } from '../../config/env.ts';
import { createLogger } from '../../server/logger.ts';
import { openDatabase } from '../../server/open-database.ts';
import { acquireServiceLock } from '../../server/service-lock.ts';
import { restoreBackup } from '../../storage/backup/restore-backup.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, print } from '../output.ts';

/**
 * `restore --from DIR` into an empty database and DICOM storage folder. Holds the data
 * directory's service lock throughout, so that no service starts on a half-restored node.
 */
export async function restoreCommand({ options, json }: CommandContext): Promise<void> {
  const source = resolve(options.required('from'));
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const lock = acquireServiceLock(config.dataDir);
  try {
    const opened = await openDatabase(config, logger, { maxConnections: 2 });
    try {
      const report = await restoreBackup(source, { database: opened.database, connectionString: opened.connectionString, dicomStorageDir: config.dicomStorageDir }, (message) => {
        if (!json) process.stderr.write(`${message}\n`);
      });
      const summary = {
        folder: source,
        backed_up_by: report.manifest.product.version,
        snapshot_at: report.manifest.snapshotAt,
        schema_migration: report.manifest.schema.newestMigration,
        migrations_applied: report.migrations.applied,
        dicom_files: report.manifest.dicom.files.length,
        // Indexed but absent when the backup was made: restored as index rows without their files.
        dicom_missing_in_backup: report.manifest.dicom.missing,
        counts: report.manifest.counts,
      };
      print(summary, json, () => formatRecord(summary));
    } finally {
      await opened.close();
    }
  } finally {
    lock.release();
  }
}
