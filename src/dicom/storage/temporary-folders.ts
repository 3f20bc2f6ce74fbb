/**
 * The temporary files of transfers live in the shared storage folder (a finished transfer is
 * hard-linked to its final name, so both must be on one file system), in a folder per node and
 * per worker process:
 *   <storage>/tmp/<node id>/worker-<n>/<random>~<siteId>.part
 * A process recovers only its own folder when it starts, and a node's supervisor every folder of
 * its node: never another node's, whose transfers may be in flight.
 *
 * Before nodes, temporary files were under the data directory: <data>/dicom/tmp/*.part and
 * <data>/dicom/tmp/worker-<n>/. They belong to the node of that data directory, which recovers
 * them once (legacyTemporaryFolders).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

const workerFolderName = /^worker-\d+$/;

/** The folder of every temporary file of one node. */
export function nodeTemporaryRoot(storageDir: string, nodeId: string): string {
  return join(storageDir, 'tmp', nodeId);
}

/** The temporary folder of worker n of a node (a single-process service is worker 1). */
export function workerTemporaryFolder(storageDir: string, nodeId: string, worker: number): string {
  return join(nodeTemporaryRoot(storageDir, nodeId), `worker-${worker}`);
}

/** Every worker folder a node has, including those of workers an earlier run had and this one does not. */
export async function nodeTemporaryFolders(storageDir: string, nodeId: string): Promise<string[]> {
  const root = nodeTemporaryRoot(storageDir, nodeId);
  return (await workerFolders(root)).map((name) => join(root, name));
}

/** The temporary folders of versions before nodes under a data directory, where any exist. */
export async function legacyTemporaryFolders(dataDir: string): Promise<{ root: string; folders: string[] }> {
  const root = join(dataDir, 'dicom');
  const tmp = join(root, 'tmp');
  const entries = await readdir(tmp).catch(() => undefined);
  if (!entries) return { root, folders: [] };
  return { root, folders: [tmp, ...(await workerFolders(tmp)).map((name) => join(tmp, name))] };
}

async function workerFolders(parent: string): Promise<string[]> {
  return (await readdir(parent, { withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isDirectory() && workerFolderName.test(entry.name))
    .map((entry) => entry.name);
}
