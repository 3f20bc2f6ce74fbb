import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database } from '../database.ts';
import { loadMigrations, migrate, type MigrationReport } from '../migrations.ts';
import { resolveStoredInstance } from '../../domain/imaging/stored-instance-file.ts';
import { countRows } from './counted-tables.ts';
import { copyStoredFile } from './create-backup.ts';
import { dicomFolderName, readManifest, sha256OfFile, type BackupManifest } from './manifest.ts';
import { BackupError, libpqConnection, postgresTool, runTool, toolMajorVersion } from './postgres-tools.ts';

/** As the DICOM listener makes them (src/storage/dicom/incoming-file.ts, layout.ts). */
const storedModes = { file: 0o640, folder: 0o755 };

export interface RestoreTarget {
  database: Database;
  connectionString: string;
  dicomStorageDir: string;
}

export interface RestoreReport {
  manifest: BackupManifest;
  migrations: MigrationReport;
}

/**
 * Restores a backup into an empty database and an empty DICOM storage folder: checks the whole
 * backup against its manifest before writing anything, restores the dump in one transaction,
 * copies the files (checking each copy's hash), compares the row counts, and migrates the schema
 * forward when the backup came from an older version.
 */
export async function restoreBackup(source: string, target: RestoreTarget, progress: (message: string) => void = () => {}): Promise<RestoreReport> {
  const manifest = await readManifest(source);
  const newest = Math.max(...(await loadMigrations()).map((migration) => migration.version));
  if (manifest.schema.newestMigration > newest) {
    throw new BackupError(`the backup's schema (migration ${manifest.schema.newestMigration}) is newer than this version's (${newest}): restore with version ${manifest.product.version} or newer`);
  }
  const pgRestore = postgresTool('pg_restore');
  const pgRestoreMajor = await toolMajorVersion(pgRestore);
  if (pgRestoreMajor < manifest.database.pgDumpMajorVersion) {
    throw new BackupError(`${pgRestore} is version ${pgRestoreMajor}, older than the pg_dump that made the backup (${manifest.database.pgDumpMajorVersion})`);
  }

  progress('checking the backup against its manifest');
  await verifyBackup(source, manifest);
  await requireEmptyDatabase(target.database);
  await requireEmptyStorage(target.dicomStorageDir);

  progress('restoring the database');
  const connection = libpqConnection(target.connectionString);
  await runTool(pgRestore, ['--single-transaction', '--exit-on-error', '--no-owner', '--no-privileges', `--dbname=${connection.dbname}`, join(source, manifest.database.file)], connection.env);
  const counts = await countRows(target.database);
  const differing = Object.entries(manifest.counts).filter(([table, count]) => counts[table] !== count);
  if (differing.length > 0) throw new BackupError(`the restored database differs from the manifest: ${differing.map(([table, count]) => `${table} ${counts[table]} rows, ${count} expected`).join('; ')}`);

  progress('copying the stored DICOM files');
  for (const file of manifest.dicom.files) {
    const copied = await copyStoredFile(resolveStoredInstance(join(source, dicomFolderName), file.path), resolveStoredInstance(target.dicomStorageDir, file.path), storedModes);
    if (!copied || copied.sha256 !== file.sha256) throw new BackupError(`${file.path} changed while it was restored`);
  }
  const migrations = await migrate(target.database);
  return { manifest, migrations };
}

async function verifyBackup(source: string, manifest: BackupManifest): Promise<void> {
  const dump = join(source, manifest.database.file);
  if (!existsSync(dump)) throw new BackupError(`the backup is incomplete: ${manifest.database.file} is missing`);
  if ((await sha256OfFile(dump)) !== manifest.database.sha256) throw new BackupError(`the backup is damaged: ${manifest.database.file} does not match its checksum in the manifest`);
  const problems: string[] = [];
  for (const file of manifest.dicom.files) {
    const path = resolveStoredInstance(join(source, dicomFolderName), file.path);
    if (!existsSync(path)) problems.push(`${file.path} is missing`);
    else if ((await sha256OfFile(path)) !== file.sha256) problems.push(`${file.path} does not match its checksum`);
    if (problems.length >= 5) break;
  }
  if (problems.length > 0) throw new BackupError(`the backup is damaged: ${problems.join('; ')}`);
}

/** Empty: no table, view or sequence outside PostgreSQL's own schemas. */
async function requireEmptyDatabase(database: Database): Promise<void> {
  const { rows } = await database.query<{ name: string }>(
    `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
     ORDER BY 1 LIMIT 3`,
  );
  if (rows.length > 0) throw new BackupError(`the target database is not empty (it has ${rows.map((row) => row.name).join(', ')}${rows.length === 3 ? ', ...' : ''}): restore into a new, empty database`);
}

/** Empty: nothing but empty temporary folders. */
async function requireEmptyStorage(storageDir: string): Promise<void> {
  if (!existsSync(storageDir)) return;
  const stored = (await readdir(storageDir, { recursive: true, withFileTypes: true })).filter((entry) => !entry.isDirectory());
  if (stored.length > 0) throw new BackupError(`the DICOM storage folder ${storageDir} is not empty (${stored.length} files): restore into an empty one`);
}
