import { close, open, unlink } from 'node:fs';

/** An empty temporary file, open for writing, whose name is already durable. */
export interface SpareFile {
  path: string;
  fd: number;
}

export interface SpareFileOptions {
  /** A new temporary file name for the site (never reused). */
  nameFor: (siteId: string) => string;
  /** Resolves once every name created before the call is durable (the temporary folder's fsync). */
  namesDurable: () => Promise<void>;
  /** The most spares one site keeps. */
  perSite: number;
  /** The most spares kept over all sites. */
  total: number;
  /** Spares of a site that has not taken one for this long are removed. */
  idleMs: number;
}

interface SiteSpares {
  ready: SpareFile[];
  creating: number;
  /** How many this site keeps: doubled each time its transfers find none ready, up to perSite. */
  wanted: number;
  lastTaken: number;
}

/** Spares a site starts with; enough for a sender that stores one instance at a time. */
const firstWanted = 2;

/**
 * Temporary files created ahead of need for the sites that are storing. A transfer's temporary
 * name must be durable before the finished file may be linked to its final name (start-up recovery
 * finds an interrupted commit through it); a file created as its transfer begins makes a small
 * transfer wait for that folder fsync at its end. A spare was created and named during earlier
 * transfers, so the link follows the transfer at once, and one folder fsync names a batch of them.
 *
 * Spares are empty, so start-up recovery removes any a crash leaves, like any temporary file
 * never linked. The pool follows use: a site gets a few when it first stores, more while its
 * transfers outrun them, and loses them all after `idleMs` without a store.
 */
export class SpareFiles {
  readonly #options: SpareFileOptions;
  readonly #sites = new Map<string, SiteSpares>();
  readonly #pending = new Set<Promise<void>>();
  /** Spares ready or being created, over all sites. */
  #count = 0;
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: SpareFileOptions) {
    this.#options = options;
  }

  /** A ready spare of the site, if there is one; either way the site's spares are topped up. */
  take(siteId: string): SpareFile | undefined {
    if (this.#closed) return undefined;
    let site = this.#sites.get(siteId);
    if (!site) {
      site = { ready: [], creating: 0, wanted: firstWanted, lastTaken: 0 };
      this.#sites.set(siteId, site);
    } else if (site.ready.length === 0) {
      site.wanted = Math.min(site.wanted * 2, this.#options.perSite);
    }
    site.lastTaken = Date.now();
    const spare = site.ready.shift();
    if (spare) this.#count--;
    this.#refill(siteId, site);
    this.#scheduleSweep();
    return spare;
  }

  /** Closes and removes every spare, including those still being created. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#sweep);
    for (const [siteId, site] of this.#sites) this.#removeSite(siteId, site);
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Files currently kept (ready or being created), for the tests. */
  get count(): number {
    return this.#count;
  }

  #refill(siteId: string, site: SiteSpares): void {
    // In batches, once half are used: every name created while a folder fsync runs shares the
    // next one, and each fsync of the temporary folder is a journal commit that the transfers'
    // own fsyncs may have to queue behind.
    const kept = site.ready.length + site.creating;
    if (kept > site.wanted / 2) return;
    const batch = Math.min(site.wanted - kept, this.#options.total - this.#count);
    if (batch <= 0) return;
    site.creating += batch;
    this.#count += batch;
    this.#track(this.#createBatch(siteId, site, batch));
  }

  /**
   * Creates `size` spares, then makes their names durable with one folder fsync begun once every
   * one of them exists: awaited file by file, the first file's fsync would start while the others
   * were still being created, and they would need a second one.
   */
  async #createBatch(siteId: string, site: SiteSpares, size: number): Promise<void> {
    const paths = Array.from({ length: size }, () => this.#options.nameFor(siteId));
    const opened = await Promise.allSettled(paths.map((path) => new Promise<number>((resolve, reject) => open(path, 'wx', 0o640, (error, fd) => (error ? reject(error) : resolve(fd))))));
    const created = opened.flatMap((result, i) => (result.status === 'fulfilled' ? [{ path: paths[i]!, fd: result.value }] : []));
    // No spare this time when a file or the fsync fails (disk full, folder gone): the transfer
    // creates its own file, and reports the failure in its answer if it persists.
    const named = created.length > 0 && (await this.#options.namesDurable().then(() => true, () => false));
    site.creating -= size;
    if (!named || this.#closed || this.#sites.get(siteId) !== site) {
      this.#count -= size;
      await Promise.all(created.map(removeFile));
      return;
    }
    this.#count -= size - created.length;
    site.ready.push(...created);
  }

  #scheduleSweep(): void {
    if (this.#sweep || this.#closed) return;
    this.#sweep = setTimeout(() => {
      this.#sweep = undefined;
      const now = Date.now();
      for (const [siteId, site] of this.#sites) {
        if (now - site.lastTaken >= this.#options.idleMs) this.#removeSite(siteId, site);
      }
      if (this.#sites.size > 0) this.#scheduleSweep();
    }, this.#options.idleMs);
    this.#sweep.unref();
  }

  /** Forgets the site: its ready spares are removed now, those being created as they finish. */
  #removeSite(siteId: string, site: SiteSpares): void {
    this.#sites.delete(siteId);
    this.#count -= site.ready.length;
    for (const spare of site.ready.splice(0)) this.#track(removeFile(spare));
  }

  #track(work: Promise<void>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }
}

function removeFile(spare: SpareFile): Promise<void> {
  return new Promise((resolve) => close(spare.fd, () => unlink(spare.path, () => resolve())));
}
