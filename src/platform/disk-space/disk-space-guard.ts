import { statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { DiskSpaceSettings } from '../../config/disk-space.ts';
import { LowDiskSpaceError } from './low-disk-space-error.ts';

/** The folder whose file system is below the floor, with the figures of the last sample. */
export interface LowDiskSpace {
  folder: string;
  freeBytes: number;
  floorBytes: number;
}

/**
 * Free space of the folders the service writes to, sampled every few seconds (one statfs per
 * folder per interval, never one per request); requests read the last sample.
 */
export interface DiskSpaceGuard {
  /** The first folder below the floor at the last sample; undefined while every one has room. */
  shortage(): LowDiskSpace | undefined;
  /** The error to refuse new data with while there is a shortage. */
  refusal(): LowDiskSpaceError | undefined;
  stop(): void;
}

export interface FreeSpace {
  /** Bytes an unprivileged writer may still use (statfs bavail), which is what the service is. */
  freeBytes: number;
  totalBytes: number;
}

export interface DiskSpaceGuardOptions {
  folders: readonly string[];
  settings: DiskSpaceSettings;
  logger: Logger;
  /** Tests give their own reading; the service reads statfs. */
  readFreeSpace?: (folder: string) => Promise<FreeSpace>;
}

/** Samples once before it returns, so the first request after start-up already sees the state. */
export async function startDiskSpaceGuard(options: DiskSpaceGuardOptions): Promise<DiskSpaceGuard> {
  const { settings, logger } = options;
  const folders = [...new Set(options.folders)];
  const read = options.readFreeSpace ?? readStatfs;
  const off = settings.minFreeBytes <= 0 && settings.minFreePercent <= 0;
  let current: LowDiskSpace | undefined;
  const unreadable = new Set<string>();

  const sample = async () => {
    let found: LowDiskSpace | undefined;
    for (const folder of folders) {
      let space: FreeSpace;
      try {
        space = await read(folder);
        unreadable.delete(folder);
      } catch (error) {
        // An unreadable folder is not a full one: the write to it fails and says why. Logged once.
        if (!unreadable.has(folder)) logger.warn({ err: error, folder }, 'cannot read the free space of a folder; it is not checked until it can be read');
        unreadable.add(folder);
        continue;
      }
      const floorBytes = Math.max(settings.minFreeBytes, Math.ceil((space.totalBytes * settings.minFreePercent) / 100));
      if (space.freeBytes < floorBytes) {
        found = { folder, freeBytes: space.freeBytes, floorBytes };
        break;
      }
    }
    // Said once on entering and once on leaving, not per refused message.
    if (found && !current) logger.warn({ diskSpace: found }, 'free disk space below the floor: new data is refused (retry later) until there is room; reads go on');
    if (!found && current) logger.info({ folder: current.folder }, 'free disk space back above the floor: new data is accepted again');
    current = found;
  };

  if (!off) await sample();
  let running: Promise<void> | undefined;
  const timer = off
    ? undefined
    : setInterval(() => {
        running ??= sample().finally(() => {
          running = undefined;
        });
      }, settings.checkIntervalMs);
  timer?.unref();
  return {
    shortage: () => current,
    refusal: () => (current ? new LowDiskSpaceError() : undefined),
    stop: () => clearInterval(timer),
  };
}

async function readStatfs(folder: string): Promise<FreeSpace> {
  // A folder created on first use (the DICOM storage, the exports) is measured by its parent's file system until then.
  for (let path = folder; ; path = dirname(path)) {
    try {
      const stats = await statfs(path, { bigint: true });
      return { freeBytes: Number(stats.bavail * stats.bsize), totalBytes: Number(stats.blocks * stats.bsize) };
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT' || dirname(path) === path) throw error;
    }
  }
}

/**
 * The folders the service writes to: the data folder, the DICOM storage, the export files and,
 * when the database is the embedded one, its folder (CG_DATA_DIR/postgres, or where it links to).
 */
export function writtenFolders(config: { dataDir: string; dicomStorageDir: string; bulkExport: { dir: string }; databaseUrl?: string }): string[] {
  return [config.dataDir, config.dicomStorageDir, config.bulkExport.dir, ...(config.databaseUrl ? [] : [join(config.dataDir, 'postgres')])];
}

/** `{ refusal }` while new data is refused, else nothing: spread into an intake's input. */
export function refusalOf(services: { diskSpace?: DiskSpaceGuard }): { refusal?: LowDiskSpaceError } {
  const refusal = services.diskSpace?.refusal();
  return refusal ? { refusal } : {};
}
