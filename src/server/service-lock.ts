import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '../storage/process-liveness.ts';

export class DataDirectoryInUseError extends Error {
  override readonly name = 'DataDirectoryInUseError';
}

/**
 * One service per data directory: two would share the embedded database and the DICOM files.
 * The lock is a file holding the owner's pid; a lock left by a killed service is taken over.
 */
const heldHere = new Set<string>();

export function acquireServiceLock(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'service.lock');
  if (heldHere.has(file)) throw new DataDirectoryInUseError(`the data directory ${dataDir} is in use by another Clinical Gateway service (pid ${process.pid})`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o644 });
      heldHere.add(file);
      return {
        release() {
          heldHere.delete(file);
          try {
            if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8').trim());
      // Our own pid in a lock we do not hold is a leftover of an earlier process that had it.
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isProcessAlive(owner)) {
        throw new DataDirectoryInUseError(`the data directory ${dataDir} is in use by another Clinical Gateway service (pid ${owner}); stop it first or set CG_DATA_DIR to another directory`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirectoryInUseError(`could not lock the data directory ${dataDir}`);
}
