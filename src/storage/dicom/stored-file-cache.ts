/**
 * Recently read stored instances, kept in memory (the storage cache of Orthanc, whose default
 * holds 128 MB, is the model). Retrieving a study of small instances is mostly the open, read and
 * close of each file, every one a trip through libuv's thread pool; a study read again (a viewer
 * reopening it, a second reader, a PACS pulling what was just viewed) is served from here.
 *
 * Entries are keyed by the index row of the instance (its id), never by path alone: a row is
 * written once per stored file, so a file stored again under the same name after a purge gets a
 * new key and can never be answered with the old bytes.
 *
 * Files are read straight into large blocks of memory allocated once, when the cache is made, one
 * file after another in the block being filled. Allocating as files arrive was tried twice and
 * measured (docs/performance.md, "The cache's misses, cured"): a buffer per file, then blocks
 * allocated as the cache filled and freed when it emptied. Either way a burst of misses added tens
 * of MB of external memory to V8 while the service was under load, and in a process whose heap had
 * grown that drove one full collection after another: a cold retrieval cost 0.77 ms of CPU an
 * instance, against 0.19 without the cache. Allocated up front the blocks are counted once, while
 * the heap is small; their pages become resident only as files are read into them, and stay so
 * for the life of the process, as Orthanc's cache does. A block is the unit of expiry: when none
 * of its files was read for `idleMs`, a miss looking for room drops them and reuses the block. A
 * full cache admits nothing until a block expires: unlike a least-recently-used list, a working set
 * slightly larger than the cache, read in turn, still finds most of it here instead of evicting
 * each file just before it is needed again.
 *
 * A file handed out is leased: its block is neither emptied nor reused until the lease is released,
 * so bytes being copied to a client can never be overwritten by another file read into the block.
 */
import { close, open, read } from 'node:fs';
import { promisify } from 'node:util';

const openFile = promisify(open);
const readFromFile = promisify(read);

export interface StoredFileCacheOptions {
  /** Bytes of memory the cache allocates, in blocks; 0 turns it off. */
  maxBytes: number;
  /** The size of one block. A file is held only when it is smaller (a byte is read beyond its recorded size). */
  blockBytes: number;
  /** A block none of whose files was read for this long is emptied when a file needs its room. */
  idleMs: number;
}

/** A held file's bytes, unchanged until `release()`; released once, after the last use of `bytes`. */
export interface CachedFile {
  readonly bytes: Buffer;
  release(): void;
}

export type CacheLookup = 'hit' | 'miss' | 'bypass';

interface Block {
  readonly memory: Buffer;
  /** Where the next file read into this block goes. */
  filled: number;
  /** The keys of the files held in it. */
  keys: string[];
  /** Files being read into it or copied out of it: while any, it is neither emptied nor reused. */
  leases: number;
  usedAt: number;
  /** False once the cache let go of it; a read finishing into it then holds nothing. */
  live: boolean;
}

interface Entry {
  block: Block;
  offset: number;
  size: number;
}

/** The share of a node's cache each worker holds, and the blocks it allocates it in. */
export function workerFileCacheOptions(nodeBytes: number, workers: number): StoredFileCacheOptions {
  const maxBytes = Math.floor(nodeBytes / Math.max(1, workers));
  return { maxBytes, blockBytes: Math.min(4 * 2 ** 20, Math.floor(maxBytes / 16)), idleMs: 30_000 };
}

export class StoredFileCache {
  readonly #options: StoredFileCacheOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #blocks: Block[] = [];
  #filling: Block | undefined;
  #bytes = 0;
  readonly #onLookup: ((outcome: CacheLookup) => void) | undefined;

  constructor(options: StoredFileCacheOptions, onLookup?: (outcome: CacheLookup) => void) {
    this.#options = options;
    this.#onLookup = onLookup;
    const blocks = options.blockBytes > 0 ? Math.floor(options.maxBytes / options.blockBytes) : 0;
    for (let i = 0; i < blocks; i++) {
      this.#blocks.push({ memory: Buffer.allocUnsafeSlow(options.blockBytes), filled: 0, keys: [], leases: 0, usedAt: 0, live: true });
    }
  }

  /** Bytes of stored files held. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Bytes of memory allocated for them, all at once when the cache was made. */
  get allocatedBytes(): number {
    return this.#blocks.length * this.#options.blockBytes;
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
  async read(key: string, path: string, sizeBytes: number): Promise<CachedFile | undefined> {
    const now = Date.now();
    const entry = this.#entries.get(key);
    if (entry && entry.size === sizeBytes) {
      entry.block.usedAt = now;
      entry.block.leases++;
      this.#onLookup?.('hit');
      return lease(entry.block, entry.offset, entry.size);
    }
    // One byte more than recorded is read: a longer file fills it, and is then not what the index says.
    const place = sizeBytes < this.#options.blockBytes ? this.#reserve(sizeBytes + 1) : undefined;
    if (!place) {
      this.#onLookup?.('bypass');
      return undefined;
    }
    this.#onLookup?.('miss');
    const { block, offset } = place;
    block.leases++;
    let asRecorded: boolean;
    try {
      asRecorded = await readExactlyInto(path, block.memory.subarray(offset, offset + sizeBytes + 1), sizeBytes);
    } catch (error) {
      block.leases--;
      throw error;
    }
    if (!asRecorded) {
      block.leases--;
      return undefined;
    }
    // Another read of the same file may have finished first; this copy is then handed out and forgotten.
    if (block.live && !this.#entries.has(key)) {
      this.#entries.set(key, { block, offset, size: sizeBytes });
      block.keys.push(key);
      block.usedAt = Date.now();
      this.#bytes += sizeBytes;
    }
    return lease(block, offset, sizeBytes);
  }

  /** Drops every entry and lets go of the blocks (the origin is closing); files leased out stay valid. */
  clear(): void {
    this.#entries.clear();
    for (const block of this.#blocks) block.live = false;
    this.#blocks.length = 0;
    this.#filling = undefined;
    this.#bytes = 0;
  }

  /** Room for `size` bytes: after the last file of the block being filled, else at the start of an empty block. */
  #reserve(size: number): { block: Block; offset: number } | undefined {
    let block = this.#filling;
    if (!block || block.memory.length - block.filled < size) {
      this.#expire(Date.now());
      block = this.#emptyBlock();
      if (!block) return undefined;
      this.#filling = block;
    }
    const offset = block.filled;
    block.filled += size;
    return { block, offset };
  }

  #emptyBlock(): Block | undefined {
    for (const block of this.#blocks) {
      if (block.keys.length === 0 && block.leases === 0) {
        block.filled = 0;
        return block;
      }
    }
    return undefined;
  }

  #expire(now: number): void {
    for (const block of this.#blocks) {
      if (block.leases === 0 && block.keys.length > 0 && now - block.usedAt >= this.#options.idleMs) this.#empty(block);
    }
  }

  #empty(block: Block): void {
    for (const key of block.keys) {
      const entry = this.#entries.get(key);
      if (entry?.block !== block) continue;
      this.#entries.delete(key);
      this.#bytes -= entry.size;
    }
    block.keys = [];
    block.filled = 0;
  }
}

function lease(block: Block, offset: number, size: number): CachedFile {
  let held = true;
  return {
    bytes: block.memory.subarray(offset, offset + size),
    release() {
      if (!held) return;
      held = false;
      block.leases--;
    },
  };
}

/**
 * Reads the file into `target` (one byte longer than `sizeBytes`) and says whether it holds
 * exactly `sizeBytes`: false when it is shorter or longer.
 */
async function readExactlyInto(path: string, target: Buffer, sizeBytes: number): Promise<boolean> {
  const fd = await openFile(path, 'r');
  try {
    let filled = 0;
    for (;;) {
      const wanted = target.length - filled;
      const { bytesRead } = await readFromFile(fd, target, filled, wanted, filled);
      filled += bytesRead;
      // A regular file reads short only at its end; a full target means the file is longer than recorded.
      if (bytesRead < wanted || filled === target.length) break;
    }
    return filled === sizeBytes;
  } finally {
    // Not awaited: nothing waits on the descriptor once its bytes are in memory.
    close(fd, () => {});
  }
}
