import { resolve } from 'node:path';
import { loadConfig } from '../../config/env.ts';
import { createLogger } from '../../server/logger.ts';
import { openDatabase } from '../../server/open-database.ts';
import { createBackup } from '../../storage/backup/create-backup.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, print } from '../output.ts';

/** `backup --to DIR`: while the service runs; see docs/backup-and-restore.md. */
export async function backupCommand({ options, json }: CommandContext): Promise<void> {
  const target = resolve(options.required('to'));
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const opened = await openDatabase(config, logger, { maxConnections: 2 });
  try {
    const manifest = await createBackup({ database: opened.database, connectionString: opened.connectionString, dicomStorageDir: config.dicomStorageDir }, target, (message) => {
      if (!json) process.stderr.write(`${message}\n`);
    });
    const summary = {
      folder: target,
      snapshot_at: manifest.snapshotAt,
      schema_migration: manifest.schema.newestMigration,
      database_bytes: manifest.database.bytes,
      dicom_files: manifest.dicom.files.length,
      dicom_bytes: manifest.dicom.bytes,
      dicom_missing: manifest.dicom.missing.length,
      counts: manifest.counts,
    };
    print(summary, json, () => formatRecord(summary));
  } finally {
    await opened.close();
  }
}
