import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Services } from '../platform/services.ts';
import { isIndexedPath } from '../domain/imaging/indexed-path.ts';
import { StorageLayout } from '../storage/dicom/layout.ts';

/** The temporary folder of worker n, under dicom/tmp. */
export function workerTemporaryFolder(worker: number): string {
  return `worker-${worker}`;
}

/**
 * Start-up recovery of every temporary folder under dicom/tmp: the single-process one and every
 * worker's (the DICOMweb origin's STOW-RS transfers included: web, web-worker-n), including those of workers a previous run had and this one does not. Only for a
 * moment when no listener of this data directory runs (the supervisor, before its workers
 * start); each worker then recovers only its own folder whenever it (re)starts.
 */
export async function recoverEveryTemporaryFolder(services: Services): Promise<number> {
  const tmp = join(services.config.dataDir, 'dicom', 'tmp');
  const workerFolders = (await readdir(tmp, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory() && /^(worker-\d+|web|web-worker-\d+)$/.test(entry.name))
    .map((entry) => entry.name);
  let removed = 0;
  for (const folder of [undefined, ...workerFolders]) {
    const layout = new StorageLayout(services.config.dataDir, folder);
    try {
      removed += await layout.prepare((relativePath) => isIndexedPath(services.database, relativePath));
    } finally {
      await layout.close();
    }
  }
  return removed;
}
