/**
 * Recently read stored instances, kept in memory (the storage cache of Orthanc, whose default
 * holds 128 MB, is the model). Retrieving a study of small instances is mostly the open, read and
 * close of each file, every one a trip through libuv's thread pool; a study read again (a viewer
 * reopening it, a second reader, a PACS pulling what was just viewed) is served from here.
 *
 * Entries are keyed by the index row of the instance (its id), never by path alone: a row is
 * written once per stored file, so a file stored again under the same name after a purge gets a
 * new key and can never be answered with the old bytes. An entry unused for `idleMs` is dropped,
 * so an idle process gives its memory back. A full cache admits nothing until entries expire:
 * unlike a least-recently-used list, a working set slightly larger than the cache, read in turn,
 * still finds most of it here instead of evicting each file just before it is needed again.
 *
 * Known cost, and why the service leaves it off unless configured: each miss allocates a buffer of
 * the file's size, external memory to V8, and a burst of misses in a process with a large heap
 * drives V8 into one full collection after another (docs/performance.md, "Why it is off by
 * default"); blocks allocated once and reused would remove that.
 */
import { close, open, read } from 'node:fs';
import { promisify } from 'node:util';

const openFile = promisify(open);
const readFromFile = promisify(read);

export interface StoredFileCacheOptions {
  /** Bytes of file contents held at most; 0 turns the cache off. */
  maxBytes: number;
  /** Files larger than this are never held (they are streamed from disk as they are). */
  maxFileBytes: number;
  /** An entry not read for this long is dropped. */
  idleMs: number;
}

interface Entry {
  bytes: Buffer;
  usedAt: number;
}

export type CacheLookup = 'hit' | 'miss' | 'bypass';

/** The share of a node's cache each worker holds, and the largest file worth holding in it. */
export function workerFileCacheOptions(nodeBytes: number, workers: number): StoredFileCacheOptions {
  const maxBytes = Math.floor(nodeBytes / Math.max(1, workers));
  return { maxBytes, maxFileBytes: Math.min(4 * 2 ** 20, Math.floor(maxBytes / 16)), idleMs: 30_000 };
}

export class StoredFileCache {
  readonly #options: StoredFileCacheOptions;
  /** In order of last use: the least recently used first. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  #sweeper: NodeJS.Timeout | undefined;
  readonly #onLookup: ((outcome: CacheLookup) => void) | undefined;

  constructor(options: StoredFileCacheOptions, onLookup?: (outcome: CacheLookup) => void) {
    this.#options = options;
    this.#onLookup = onLookup;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get entries(): number {
    return this.#entries.size;
  }

  /**
   * The whole file of the instance `key` stored at `path`, from memory or read now, when it is
   * recorded as `sizeBytes` and that is what the file holds. Undefined, with nothing read, for a
   * file too large to hold or when the cache is full; undefined as well when the file on disk is
   * not that size: the caller streams such files as they are.
   */
  async read(key: string, path: string, sizeBytes: number): Promise<Buffer | undefined> {
    const now = Date.now();
    const entry = this.#entries.get(key);
    if (entry && entry.bytes.length === sizeBytes) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      entry.usedAt = now;
      this.#onLookup?.('hit');
      return entry.bytes;
    }
    this.#expire(now);
    if (this.#options.maxBytes === 0 || sizeBytes > this.#options.maxFileBytes || this.#bytes + sizeBytes > this.#options.maxBytes) {
      this.#onLookup?.('bypass');
      return undefined;
    }
    this.#onLookup?.('miss');
    const bytes = await readExactly(path, sizeBytes);
    if (!bytes || this.#entries.has(key) || this.#bytes + bytes.length > this.#options.maxBytes) return bytes;
    this.#entries.set(key, { bytes, usedAt: Date.now() });
    this.#bytes += bytes.length;
    this.#sweeper ??= setInterval(() => this.#expire(Date.now()), Math.max(1_000, this.#options.idleMs / 2)).unref();
    return bytes;
  }

  /** Drops every entry and stops the sweeping. */
  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  #expire(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now - entry.usedAt < this.#options.idleMs) break;
      this.#entries.delete(key);
      this.#bytes -= entry.bytes.length;
    }
    if (this.#entries.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}

/** The file's bytes when it holds exactly `sizeBytes`; undefined when it is shorter or longer. */
async function readExactly(path: string, sizeBytes: number): Promise<Buffer | undefined> {
  const fd = await openFile(path, 'r');
  try {
    // One byte more than recorded: a longer file reads it, and is then not what the index says.
    const buffer = Buffer.allocUnsafeSlow(sizeBytes + 1);
    let filled = 0;
    for (;;) {
      const wanted = buffer.length - filled;
      const { bytesRead } = await readFromFile(fd, buffer, filled, wanted, filled);
      filled += bytesRead;
      // A regular file reads short only at its end; a full buffer means the file is longer than recorded.
      if (bytesRead < wanted || filled === buffer.length) break;
    }
    return filled === sizeBytes ? buffer.subarray(0, sizeBytes) : undefined;
  } finally {
    // Not awaited: nothing waits on the descriptor once its bytes are in memory.
    close(fd, () => {});
  }
}
