import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

/**
 * Where instances live under the data directory:
 *   dicom/tmp/<random>.part                               transfers in progress
 *   dicom/tmp/<random>.moving                             a file being moved into place whose
 *                                                         index transaction has not committed yet
 *   dicom/<siteId>/<studyUid>/<seriesUid>/<sopUid>.dcm    stored instances
 * The UIDs are checked to be digits and dots first, so no path can leave its folder.
 */
export class StorageLayout {
  readonly root: string;
  readonly tmpDir: string;
  readonly #dataDir: string;

  constructor(dataDir: string) {
    this.#dataDir = dataDir;
    this.root = join(dataDir, 'dicom');
    this.tmpDir = join(this.root, 'tmp');
  }

  /**
   * Creates the folders and removes what a previous run left unfinished: half-written transfers,
   * and files moved into place whose index transaction never committed (a crash in that window).
   * `isIndexed` answers whether the index points at a relative path; when it cannot answer (the
   * database is down), the marker stays for the next start.
   */
  async prepare(isIndexed: (relativePath: string) => Promise<boolean>): Promise<number> {
    await mkdir(this.tmpDir, { recursive: true });
    let removed = 0;
    for (const name of await readdir(this.tmpDir)) {
      const path = join(this.tmpDir, name);
      if (name.endsWith('.part')) {
        await unlink(path).catch(() => {});
        removed++;
      } else if (name.endsWith('.moving')) {
        const target = (await readFile(path, 'utf8').catch(() => '')).trim();
        let indexed: boolean;
        try {
          indexed = target === '' || (await isIndexed(target));
        } catch {
          continue;
        }
        if (!indexed) {
          await unlink(this.absolute(target)).catch(() => {});
          removed++;
        }
        await unlink(path).catch(() => {});
      }
    }
    return removed;
  }

  /**
   * Records, durably, that a file is about to be moved to `relativePath` ahead of its index
   * commit; clearMoving removes the record once the commit is settled either way.
   */
  async markMoving(relativePath: string): Promise<string> {
    const marker = join(this.tmpDir, `${randomBytes(12).toString('hex')}.moving`);
    await writeFile(marker, relativePath, { flush: true });
    await fsyncDirectory(this.tmpDir);
    return marker;
  }

  async clearMoving(marker: string): Promise<void> {
    await unlink(marker).catch(() => {});
  }

  /** Path relative to the data directory, as the index records it. */
  instancePath(siteId: string, studyUid: string, seriesUid: string, sopUid: string): string {
    for (const uid of [studyUid, seriesUid, sopUid]) {
      if (!/^[0-9]+(\.[0-9]+)*$/.test(uid) || uid.length > 64) throw new Error(`not a UID usable as a file name: ${uid}`);
    }
    if (!/^[0-9a-f-]{36}$/.test(siteId)) throw new Error('not a site id');
    return relative(this.#dataDir, join(this.root, siteId, studyUid, seriesUid, `${sopUid}.dcm`)).split(sep).join('/');
  }

  absolute(relativePath: string): string {
    return join(this.#dataDir, relativePath);
  }

  /**
   * Moves a fsynced temporary file to its final place and makes the move durable: the target
   * folder (and any folder created for it) is fsynced, so the entry survives a crash.
   */
  async moveIntoPlace(tempPath: string, relativePath: string): Promise<void> {
    const target = this.absolute(relativePath);
    const created = await mkdir(dirname(target), { recursive: true });
    await rename(tempPath, target);
    await fsyncDirectory(dirname(target));
    if (created) {
      // mkdir returns the first folder it created: each new folder's parent must record it.
      for (let folder = dirname(target); folder.length >= created.length; folder = dirname(folder)) {
        await fsyncDirectory(dirname(folder));
      }
    }
  }
}

async function fsyncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
