import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { resolveStoredInstance, storedInstancePath } from '../../domain/imaging/stored-instance-file.ts';
import { DirectorySync } from './directory-sync.ts';
import { OpenDirectories } from './open-directories.ts';
import { readStoredIdentity } from './stored-identity.ts';
import { SpareFiles, type SpareFile } from './spare-files.ts';

const maxDurableFolders = 10_000;

/** Runs work on a final name while no other process may replace the file there (stored-path-lock.ts). */
export type PathExclusion = <T>(relativePath: string, work: () => Promise<T>) => Promise<T>;

/** How often kept undecided names are checked against the index. */
const undecidedSweepMs = 1_000;

/**
 * Where instances live in the DICOM storage folder (CG_DICOM_STORAGE_DIR, shared by the nodes):
 *   tmp/<node id>/worker-<n>/<random>~<siteId>.part        transfers, named durably as they begin
 *   <siteId>/<studyUid>/<seriesUid>/<sopUid>.dcm            stored instances
 * (temporary-folders.ts, stored-instance-file.ts). The UIDs are checked to be digits and dots
 * first, so no path can leave its folder.
 *
 * A finished transfer is linked to its final name (a second name of the same file, never
 * replacing one) before its index commits, and its temporary name is removed after. A crash in
 * between leaves a temporary file with two names: start-up recovery reads which instance it holds
 * and removes the final name unless the index points at it. So a transfer's temporary name must be
 * durable before its final name can be, which its creation arranges (one fsync of the temporary
 * folder, shared by concurrent transfers, while the dataset is still arriving).
 */
export class StorageLayout {
  readonly root: string;
  readonly tmpDir: string;
  readonly #directories = new OpenDirectories();
  readonly #sync = new DirectorySync((folder) => this.#directories.fsync(folder));
  /** Folders whose own entry, and every ancestor's, is known to be durable. */
  readonly #durableFolders = new Set<string>();
  /** Temporary names kept after a commit of unknown outcome, by target, until a commit there settles it. */
  readonly #undecided = new Map<string, string[]>();
  /** The index look-up prepare() was given, for settling undecided names later. */
  #isIndexed: ((relativePath: string) => Promise<boolean>) | undefined;
  #undecidedSweep: NodeJS.Timeout | undefined;
  /** Changes to one final name, one at a time: placing, replacing and taking back never interleave. */
  readonly #pathChanges = new Map<string, Promise<unknown>>();
  readonly #spares = new SpareFiles({
    nameFor: (siteId) => this.temporaryPath(siteId),
    namesDurable: () => this.temporaryNamesDurable(),
    perSite: 16,
    total: 64,
    idleMs: 5_000,
  });

  /**
   * `temporaryFolder` is this process's own (temporary-folders.ts): start-up recovery removes what
   * it finds there, so each process recovers only its own transfers, never another node's.
   */
  constructor(storageDir: string, temporaryFolder: string) {
    this.root = storageDir;
    this.tmpDir = temporaryFolder;
  }

  /**
   * Creates the folders and removes what a previous run left unfinished: half-written transfers,
   * and files linked into place whose index transaction never committed (a crash in that window).
   * `isIndexed` answers whether the index points at a relative path; when it cannot answer (the
   * database is down), the temporary file stays for the next start.
   */
  async prepare(isIndexed: (relativePath: string) => Promise<boolean>, exclusively: PathExclusion = (_path, work) => work()): Promise<number> {
    this.#isIndexed = isIndexed;
    await this.#ensureFolder(this.tmpDir);
    let removed = 0;
    for (const name of await readdir(this.tmpDir)) {
      const path = join(this.tmpDir, name);
      try {
        if (name.endsWith('.part')) removed += await this.#recoverTransfer(name, path, isIndexed, exclusively);
        else if (name.endsWith('.moving')) removed += await this.#recoverMarker(name, path, isIndexed);
      } catch {
        // Undecidable now (database down, unreadable file): left for the next start.
      }
    }
    return removed;
  }

  /**
   * A transfer's temporary file: one never linked is half-written and goes; one linked into place
   * goes with its final name unless the index points there. Counts the unindexed files removed.
   */
  async #recoverTransfer(name: string, path: string, isIndexed: (relativePath: string) => Promise<boolean>, exclusively: PathExclusion): Promise<number> {
    const siteId = /^[0-9a-f-]{36}~([0-9a-f-]{36})\.part$/.exec(name)?.[1];
    const file = await stat(path).catch(() => undefined);
    if (siteId && file && file.nlink > 1) {
      const identity = await readStoredIdentity(path);
      if (!identity) return 0; // linked, but not readable as an instance: kept for an operator
      const target = this.instancePath(siteId, identity.studyInstanceUid, identity.seriesInstanceUid, identity.sopInstanceUid);
      // Checked and removed while no store of any node replaces the file at that name.
      const unindexed = await exclusively(target, async () => {
        const placed = await stat(this.absolute(target)).catch(() => undefined);
        const remove = sameFile(placed, file) && !(await isIndexed(target));
        if (remove) await unlink(this.absolute(target));
        return remove;
      });
      await unlink(path).catch(() => {});
      return unindexed ? 1 : 0;
    }
    await unlink(path).catch(() => {});
    return 1;
  }

  /**
   * A marker of earlier versions (moved into place by rename, the marker naming the target or
   * holding it as content): the file goes unless indexed.
   */
  async #recoverMarker(name: string, path: string, isIndexed: (relativePath: string) => Promise<boolean>): Promise<number> {
    const target = this.#markedTarget(name) ?? (await readFile(path, 'utf8').catch(() => '')).trim();
    let removed = 0;
    if (target !== '' && !(await isIndexed(target))) {
      await unlink(this.absolute(target)).catch(() => {});
      removed = 1;
    }
    await unlink(path).catch(() => {});
    return removed;
  }

  /** Removes the spare temporary files and closes the folder descriptors (the listener has stopped storing). */
  async close(): Promise<void> {
    clearInterval(this.#undecidedSweep);
    this.#undecidedSweep = undefined;
    await this.#spares.close();
    await this.#directories.forgetAll();
  }

  /** A temporary file of the site created ahead of need and already durably named, if one is ready. */
  takeSpare(siteId: string): SpareFile | undefined {
    return this.#spares.take(siteId);
  }

  /** Where a new transfer for a site is written. */
  temporaryPath(siteId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(siteId)) throw new Error('not a site id');
    return join(this.tmpDir, `${randomUUID()}~${siteId}.part`);
  }

  /** Resolves once every temporary file created before the call has a durable name. */
  temporaryNamesDurable(): Promise<void> {
    return this.#sync.sync(this.tmpDir);
  }

  /**
   * Links a finished transfer to its final name, unless a file is already there (undefined): a
   * stored instance's file is never replaced this way. The link is durable once `durable`
   * resolves; the temporary name must already be (temporaryNamesDurable).
   */
  placeFile(tempPath: string, relativePath: string): Promise<{ durable: Promise<void> } | undefined> {
    return this.#changePath(relativePath, async () => {
      try {
        return await this.#link(tempPath, relativePath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
        throw error;
      }
    });
  }

  /**
   * Puts a finished transfer in place of a file the index does not point at: the caller's
   * transaction holds the instance's SOP Instance UID, so the file there is a leftover (a commit
   * that never happened, or a store of the same UID that failed).
   */
  replaceUnindexed(tempPath: string, relativePath: string): Promise<{ durable: Promise<void> }> {
    return this.#changePath(relativePath, async () => {
      await unlink(this.absolute(relativePath)).catch(() => {});
      return this.#link(tempPath, relativePath);
    });
  }

  /** Removes the final name of a transfer that will not be indexed, if it still is that transfer's. */
  takeBack(tempPath: string, relativePath: string): Promise<void> {
    return this.#changePath(relativePath, async () => {
      const [temp, placed] = await Promise.all([stat(tempPath).catch(() => undefined), stat(this.absolute(relativePath)).catch(() => undefined)]);
      if (sameFile(temp, placed)) await unlink(this.absolute(relativePath));
    });
  }

  /** Removes a transfer's temporary name once its index has committed. Never throws. */
  async release(tempPath: string): Promise<void> {
    await unlink(tempPath).catch(() => {});
  }

  async #link(tempPath: string, relativePath: string): Promise<{ durable: Promise<void> }> {
    const target = this.absolute(relativePath);
    const folder = dirname(target);
    await this.#ensureFolder(folder);
    try {
      await link(tempPath, target);
    } catch (error) {
      // A folder removed behind our back: nothing cached about folders can be trusted any more.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.#durableFolders.clear();
      await this.#directories.forgetAll();
      await this.#ensureFolder(folder);
      await link(tempPath, target);
    }
    const durable = this.#sync.sync(folder);
    durable.catch(() => {}); // observed by the caller; never an unhandled rejection
    return { durable };
  }

  #changePath<T>(relativePath: string, change: () => Promise<T>): Promise<T> {
    const previous = this.#pathChanges.get(relativePath) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(change);
    const settled = next.catch(() => {});
    this.#pathChanges.set(relativePath, settled);
    void settled.then(() => {
      if (this.#pathChanges.get(relativePath) === settled) this.#pathChanges.delete(relativePath);
    });
    return next;
  }

  /**
   * Keeps the temporary name of a transfer whose index commit has an unknown outcome (the
   * connection was lost during COMMIT): its file may be indexed or not, so both names stay until a
   * later commit of the same target settles it (settle) or start-up recovery does. The retry that
   * settles it may be stored by another worker or node, whose commit cannot call settle here: so
   * every second, while names are kept, the index is asked whether their targets are indexed now.
   */
  keepUndecided(relativePath: string, tempPath: string): void {
    this.#undecided.set(relativePath, [...(this.#undecided.get(relativePath) ?? []), tempPath]);
    this.#undecidedSweep ??= setInterval(() => void this.#settleIndexed(), undecidedSweepMs).unref();
  }

  /** Settles each kept target the index now points at; one it cannot answer for waits for the next sweep. */
  async #settleIndexed(): Promise<void> {
    for (const target of [...this.#undecided.keys()]) {
      const indexed = await this.#isIndexed?.(target).catch(() => false);
      if (indexed) await this.settle(target);
    }
    if (this.#undecided.size === 0) {
      clearInterval(this.#undecidedSweep);
      this.#undecidedSweep = undefined;
    }
  }

  /**
   * A commit naming this target has settled what its file is (indexed by it, or by the committed
   * instance it duplicates): temporary names kept undecided for the target are no longer needed.
   */
  async settle(relativePath: string): Promise<void> {
    const kept = this.#undecided.get(relativePath);
    if (!kept) return;
    this.#undecided.delete(relativePath);
    await Promise.all(kept.map((path) => this.release(path)));
  }

  /** The relative path an earlier version's marker name records; undefined for one holding it as content. */
  #markedTarget(name: string): string | undefined {
    const parts = /^[0-9a-f]+~([0-9a-f-]{36})~([0-9.]+)~([0-9.]+)~([0-9.]+)\.moving$/.exec(name);
    try {
      return parts ? this.instancePath(parts[1]!, parts[2]!, parts[3]!, parts[4]!) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Path relative to the storage folder, as the index records it. */
  instancePath(siteId: string, studyUid: string, seriesUid: string, sopUid: string): string {
    return storedInstancePath(siteId, studyUid, seriesUid, sopUid);
  }

  absolute(relativePath: string): string {
    return resolveStoredInstance(this.root, relativePath);
  }

  /**
   * Creates the folder an instance goes to and makes its entry durable (and every new ancestor's),
   * so that linking the file later only has the folder itself to fsync. A store calls it while its
   * index statements run; placeFile calls it again, which is then free.
   */
  async prepareFolder(relativePath: string): Promise<void> {
    await this.#ensureFolder(dirname(this.absolute(relativePath)));
  }

  /**
   * Creates `folder` if needed and fsyncs the parent of every folder on its path whose entry is
   * not yet known to be durable: one just created here, or by a concurrent store whose own fsync
   * may not have finished.
   */
  async #ensureFolder(folder: string): Promise<void> {
    if (this.#durableFolders.has(folder)) return;
    await mkdir(folder, { recursive: true });
    const parents: string[] = [];
    const top = dirname(this.root);
    for (let current = folder; !this.#durableFolders.has(current) && current !== top && dirname(current) !== current; ) {
      current = dirname(current);
      parents.push(current);
    }
    await Promise.all(parents.map((path) => this.#sync.sync(path)));
    // Bounded: forgetting only costs a few extra fsyncs of folders that have nothing to flush.
    if (this.#durableFolders.size > maxDurableFolders) this.#durableFolders.clear();
    this.#durableFolders.add(folder);
    for (const path of parents) this.#durableFolders.add(path);
  }
}

/** Two names of one file (hard links): the same inode on the same device. */
function sameFile(a: Stats | undefined, b: Stats | undefined): boolean {
  return a !== undefined && b !== undefined && a.ino === b.ino && a.dev === b.dev;
}
