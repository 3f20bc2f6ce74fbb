import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BackupError } from './postgres-tools.ts';

/** Bumped when the layout of a backup folder changes in a way an older restore cannot read. */
export const backupFormat = 1;
export const manifestFileName = 'manifest.json';
export const databaseDumpFileName = 'database.dump';
export const dicomFolderName = 'dicom';

export interface BackedUpFile {
  /** The stored instance's path under the DICOM storage folder (imaging_instance.storage_path, canonical). */
  path: string;
  bytes: number;
  sha256: string;
}

/**
 * Written last, by rename: a backup folder without it is incomplete (interrupted, or not a backup).
 */
export interface BackupManifest {
  format: number;
  product: { name: string; version: string };
  createdAt: string;
  /** When the database snapshot was taken: everything committed before it is in the backup. */
  snapshotAt: string;
  schema: { newestMigration: number; migrations: number };
  database: { file: string; bytes: number; sha256: string; serverMajorVersion: number; pgDumpMajorVersion: number };
  counts: Record<string, number>;
  dicom: {
    files: BackedUpFile[];
    bytes: number;
    /** Indexed in the snapshot but gone from the storage folder when copied (should stay empty). */
    missing: string[];
  };
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function writeManifest(folder: string, manifest: BackupManifest): Promise<void> {
  const partial = join(folder, `${manifestFileName}.partial`);
  await writeFile(partial, `${JSON.stringify(manifest, null, 1)}\n`, { flag: 'wx', mode: 0o600 });
  await rename(partial, join(folder, manifestFileName));
}

/** Reads and checks the shape of a backup folder's manifest; says plainly what is wrong. */
export async function readManifest(folder: string): Promise<BackupManifest> {
  if (!existsSync(folder)) throw new BackupError(`${folder} does not exist`);
  const file = join(folder, manifestFileName);
  if (!existsSync(file)) {
    const started = existsSync(join(folder, databaseDumpFileName)) || existsSync(join(folder, `${manifestFileName}.partial`));
    throw new BackupError(
      started
        ? `${folder} is an incomplete backup: ${manifestFileName} is missing (the backup was interrupted before it finished); make a new backup`
        : `${folder} is not a Clinical Gateway backup: it has no ${manifestFileName}`,
    );
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(file, 'utf8')) as BackupManifest;
  } catch (error) {
    throw new BackupError(`${file} is not readable JSON: ${(error as Error).message}`);
  }
  if (typeof manifest !== 'object' || manifest === null || typeof manifest.format !== 'number' || !manifest.database || !manifest.dicom || !Array.isArray(manifest.dicom.files) || !manifest.schema) {
    throw new BackupError(`${file} is not a Clinical Gateway backup manifest`);
  }
  if (manifest.format > backupFormat) throw new BackupError(`the backup has format ${manifest.format}; this version reads format ${backupFormat} and older: restore with a newer version`);
  return manifest;
}
