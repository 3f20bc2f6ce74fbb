import { close, fsync, open } from 'node:fs';

const maxOpen = 64;

interface Entry {
  fd: Promise<number>;
  inUse: number;
}

/**
 * Descriptors of recently synced folders, kept open so that a folder fsync is one call instead of
 * open, fsync and close (three trips through the thread pool, twice per stored instance). At most
 * 64 stay open; the least recently used idle one is closed beyond that. A descriptor outlives a
 * folder removed and created again behind the service's back, so whoever notices that (a link
 * failing with ENOENT) must call forgetAll, as it forgets which folders are durable.
 */
export class OpenDirectories {
  readonly #entries = new Map<string, Entry>();

  async fsync(folder: string): Promise<void> {
    const entry = this.#acquire(folder);
    try {
      const fd = await entry.fd;
      await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
    } catch (error) {
      // A descriptor that failed once is not trusted again.
      if (this.#entries.get(folder) === entry) this.#entries.delete(folder);
      entry.inUse--;
      if (entry.inUse === 0) void closeWhenOpen(entry);
      throw error;
    }
    entry.inUse--;
    if (entry.inUse === 0 && this.#entries.get(folder) !== entry) void closeWhenOpen(entry);
    this.#trim();
  }

  /**
   * Closes every idle descriptor and drops the busy ones, which close when their fsync is done.
   * Resolves once the idle ones are closed.
   */
  async forgetAll(): Promise<void> {
    const idle = [...this.#entries.values()].filter((entry) => entry.inUse === 0);
    this.#entries.clear();
    await Promise.all(idle.map(closeWhenOpen));
  }

  #acquire(folder: string): Entry {
    let entry = this.#entries.get(folder);
    if (entry) {
      this.#entries.delete(folder); // re-inserted below: most recently used last
    } else {
      const fd = new Promise<number>((resolve, reject) => open(folder, 'r', (error, fd) => (error ? reject(error) : resolve(fd))));
      fd.catch(() => {}); // observed by fsync
      entry = { fd, inUse: 0 };
    }
    entry.inUse++;
    this.#entries.set(folder, entry);
    this.#trim();
    return entry;
  }

  /** Closes the least recently used idle descriptors beyond the limit (busy ones wait their turn). */
  #trim(): void {
    for (const [name, candidate] of this.#entries) {
      if (this.#entries.size <= maxOpen) return;
      if (candidate.inUse > 0) continue;
      this.#entries.delete(name);
      void closeWhenOpen(candidate);
    }
  }
}

function closeWhenOpen(entry: Entry): Promise<void> {
  return entry.fd.then(
    (fd) => new Promise<void>((resolve) => close(fd, () => resolve())),
    () => {},
  );
}
