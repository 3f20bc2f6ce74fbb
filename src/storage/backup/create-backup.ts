import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import Cursor from 'pg-cursor';
import type { Database } from '../database.ts';
import { canonicalStoragePath, resolveStoredInstance } from '../../domain/imaging/stored-instance-file.ts';
import { countRows, schemaLevel } from './counted-tables.ts';
import { backupFormat, databaseDumpFileName, dicomFolderName, sha256OfFile, writeManifest, type BackedUpFile, type BackupManifest } from './manifest.ts';
import { BackupError, libpqConnection, postgresTool, runTool, toolMajorVersion } from './postgres-tools.ts';
import { productVersion } from './product-version.ts';

export interface BackupSource {
  database: Database;
  connectionString: string;
  dicomStorageDir: string;
}

/** How many stored files are copied at once. */
const parallelCopies = 4;
const instanceBatch = 500;

/**
 * A consistent backup of a running service into an empty folder: the database first, then the
 * stored DICOM files, then the manifest.
 *
 * One repeatable-read transaction exports its snapshot; pg_dump dumps exactly that snapshot
 * (--snapshot), and the list of files to copy is read from the same snapshot's imaging index. A
 * stored file never changes once its index row commits, so every file the dump names is copied,
 * and files stored after the snapshot (not in the dump) are not. Temporary transfer folders are
 * never read. The snapshot is held until the files are copied, which holds back VACUUM for that
 * long, as any long pg_dump does.
 */
export async function createBackup(source: BackupSource, target: string, progress: (message: string) => void = () => {}): Promise<BackupManifest> {
  await prepareEmptyFolder(target);
  const pgDump = postgresTool('pg_dump');
  const pgDumpMajor = await toolMajorVersion(pgDump);
  const client = await source.database.pool.connect();
  const ignoreClientError = () => {};
  client.on('error', ignoreClientError);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The transaction waits, idle, while pg_dump runs; a server-wide timeout must not end it (pg_dump lifts its own).
    await client.query("SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = 0");
    const { rows } = await client.query<{ snapshot: string; at: Date; server: string }>(
      "SELECT pg_export_snapshot() AS snapshot, clock_timestamp() AS at, current_setting('server_version_num') AS server",
    );
    const { snapshot, at, server } = rows[0]!;
    const serverMajor = Math.floor(Number(server) / 10_000);
    if (pgDumpMajor < serverMajor) throw new BackupError(`${pgDump} is version ${pgDumpMajor}, older than the database server (${serverMajor}): install pg_dump ${serverMajor} or newer, or set CG_PG_BIN_DIR`);
    const counts = await countRows(client);
    const schema = await schemaLevel(client);

    progress('dumping the database');
    const dumpFile = join(target, databaseDumpFileName);
    const connection = libpqConnection(source.connectionString);
    await runTool(pgDump, ['--format=custom', `--snapshot=${snapshot}`, '--no-owner', '--no-privileges', `--file=${dumpFile}`, `--dbname=${connection.dbname}`], connection.env);
    await chmod(dumpFile, 0o600);

    progress('copying the stored DICOM files');
    const copied = await copyIndexedFiles(client, source.dicomStorageDir, join(target, dicomFolderName));
    await client.query('COMMIT');

    const manifest: BackupManifest = {
      format: backupFormat,
      product: { name: 'clinical-gateway', version: productVersion() },
      createdAt: new Date().toISOString(),
      snapshotAt: at.toISOString(),
      schema,
      database: { file: databaseDumpFileName, bytes: (await stat(dumpFile)).size, sha256: await sha256OfFile(dumpFile), serverMajorVersion: serverMajor, pgDumpMajorVersion: pgDumpMajor },
      counts,
      dicom: { files: copied.files, bytes: copied.files.reduce((sum, file) => sum + file.bytes, 0), missing: copied.missing },
    };
    await writeManifest(target, manifest);
    return manifest;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.off('error', ignoreClientError);
    client.release();
  }
}

/** Makes `target` (new or empty, else a BackupError), readable by the service's account only. */
export async function prepareEmptyFolder(target: string, what = 'a backup'): Promise<void> {
  if (existsSync(target)) {
    const entries = await readdir(target).catch((error: Error) => {
      throw new BackupError(`cannot use ${target} for ${what}: ${error.message}`);
    });
    if (entries.length > 0) throw new BackupError(`${target} is not empty: ${what} goes into a new or empty folder`);
  }
  // Patient data and credential hashes: readable by the service's account only.
  await mkdir(target, { recursive: true, mode: 0o700 });
  await chmod(target, 0o700);
}

async function copyIndexedFiles(client: pg.PoolClient, storageDir: string, targetDir: string): Promise<{ files: BackedUpFile[]; missing: string[] }> {
  const files: BackedUpFile[] = [];
  const missing: string[] = [];
  const cursor = client.query(new Cursor<{ storage_path: string }>('SELECT storage_path FROM imaging_instance ORDER BY storage_path'));
  try {
    for (;;) {
      const batch = await cursor.read(instanceBatch);
      if (batch.length === 0) break;
      const paths = batch.map((row) => canonicalStoragePath(row.storage_path));
      for (let i = 0; i < paths.length; i += parallelCopies) {
        await Promise.all(
          paths.slice(i, i + parallelCopies).map(async (path) => {
            const copied = await copyStoredFile(resolveStoredInstance(storageDir, path), resolveStoredInstance(targetDir, path), { file: 0o600, folder: 0o700 });
            if (copied) files.push({ path, ...copied });
            else missing.push(path);
          }),
        );
      }
    }
  } finally {
    await cursor.close();
  }
  files.sort((a, b) => (a.path < b.path ? -1 : 1));
  return { files, missing };
}

/** Copies one file, hashing it as it is read; undefined when the source is gone. */
export async function copyStoredFile(from: string, to: string, modes: { file: number; folder: number }): Promise<{ bytes: number; sha256: string } | undefined> {
  await mkdir(dirname(to), { recursive: true, mode: modes.folder });
  const hash = createHash('sha256');
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(from), tap, createWriteStream(to, { flags: 'wx', mode: modes.file }));
  } catch (error) {
    await unlink(to).catch(() => {});
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(from)) return undefined;
    throw error;
  }
  return { bytes, sha256: hash.digest('hex') };
}
