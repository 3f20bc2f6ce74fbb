import { whileStoredPathLocked } from '../domain/imaging/stored-path-lock.ts';
import type { Services } from '../platform/services.ts';
import { isIndexedPath } from '../domain/imaging/indexed-path.ts';
import { StorageLayout } from '../storage/dicom/layout.ts';
import { legacyTemporaryFolders, nodeTemporaryFolders } from '../storage/dicom/temporary-folders.ts';

/**
 * Start-up recovery of every temporary folder of this node: every worker's (the DICOMweb origin's
 * STOW-RS transfers included, web-worker-<n>), including those of workers a previous run had and this one does not, and those of versions before nodes under this
 * node's data directory. Never another node's folder: its transfers may be in flight. Only for a
 * moment when no listener of this node runs (before its workers start); each worker then recovers
 * only its own folder whenever it (re)starts.
 */
export async function recoverNodeTemporaryFolders(services: Services, nodeId: string): Promise<number> {
  const storage = services.config.dicomStorageDir;
  const legacy = await legacyTemporaryFolders(services.config.dataDir);
  const layouts = [
    ...(await nodeTemporaryFolders(storage, nodeId)).map((folder) => new StorageLayout(storage, folder)),
    ...legacy.folders.map((folder) => new StorageLayout(legacy.root, folder)),
  ];
  let removed = 0;
  for (const layout of layouts) {
    try {
      removed += await layout.prepare((relativePath) => isIndexedPath(services.database, relativePath), (relativePath, work) => whileStoredPathLocked(services.database, relativePath, work));
    } finally {
      await layout.close();
    }
  }
  return removed;
}
