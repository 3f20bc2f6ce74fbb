import { createHash, type Hash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { createWriteStream, fdatasync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { encodePart10Header, type FileMetaInput } from './dataset/part10-header.ts';
import { HeaderSniffer, type SniffResult } from './dataset/header-sniffer.ts';
import type { SpareFile } from './spare-files.ts';

/** Above this many bytes queued for the disk, the connection stops reading from its socket. */
const highWaterMark = 1024 * 1024;

/**
 * A large transfer flushes what it has written so far each time this much more has arrived, so
 * the disk writes while the network delivers the rest, and the fsync before success only has the
 * tail left to write.
 */
const flushEvery = 4 * 1024 * 1024;

export interface CompletedFile {
  tempPath: string;
  /** Size of the whole Part-10 file. */
  sizeBytes: number;
  /** SHA-256 of the dataset bytes exactly as received (the file without its Part-10 header). */
  sha256: string;
  sniff: SniffResult;
  /** Resolves once the temporary file exists under a durable name; rejects with why it could not. */
  named: Promise<void>;
}

/**
 * One C-STORE dataset on its way to disk: a Part-10 header, then each P-DATA fragment as it
 * arrives, hashed and read for its header attributes on the way. `write` resolves only when the
 * file stream has room again, so the association's read loop (which awaits it) stops reading the
 * socket while the disk is behind: memory stays bounded whatever the instance size.
 */
export class IncomingFile {
  readonly tempPath: string;
  #stream: WriteStream;
  #fd: number | undefined;
  #named: Promise<void>;
  #hash: Hash = createHash('sha256');
  #sniffer: HeaderSniffer;
  #size: number;
  #failure: Error | undefined;
  #unflushed = 0;
  #flushing: Promise<void> | undefined;
  /** The Part-10 header, until it goes out with the first fragment. */
  #header: Buffer | undefined;

  /** `opened` resolves with the file's descriptor; `named` once its name is durable. */
  private constructor(tempPath: string, stream: WriteStream, header: Buffer, transferSyntaxUid: string, opened: Promise<number>, named: Promise<void>) {
    this.tempPath = tempPath;
    this.#stream = stream;
    this.#stream.on('error', (error) => {
      this.#failure ??= error;
    });
    // The open's failure (EEXIST, ENOSPC, EACCES) is also recorded by the 'error' listener above.
    opened.then((fd) => (this.#fd = fd), () => {});
    this.#named = named;
    this.#named.catch(() => {}); // observed by the caller; never an unhandled rejection
    this.#sniffer = new HeaderSniffer(transferSyntaxUid);
    this.#size = header.length;
    this.#header = header;
  }

  /**
   * Creates the temporary file (exclusively: a name never reused) with the Part-10 header, and
   * makes its name durable through `nameDurable`. The transfer does not wait for the file to
   * exist: allocating an inode can take longer than receiving a small dataset, and the stream
   * holds what arrives until the file is open (still bounded by its high-water mark).
   */
  static create(tempPath: string, meta: FileMetaInput, nameDurable: () => Promise<void>): IncomingFile {
    // flush: the descriptor is fsynced before it is closed, so 'close' means durable on disk.
    const stream = createWriteStream(tempPath, { flags: 'wx', mode: 0o640, highWaterMark, flush: true });
    const opened = once(stream, 'open').then(([fd]) => fd as number);
    // The name's fsync runs while the dataset arrives, so it is done by the time the file is
    // linked into place.
    return new IncomingFile(tempPath, stream, encodePart10Header(meta), meta.transferSyntaxUid, opened, opened.then(nameDurable));
  }

  /** Writes the transfer into a spare: a file already created, open, and durably named. */
  static adopt(spare: SpareFile, meta: FileMetaInput): IncomingFile {
    const stream = createWriteStream(spare.path, { fd: spare.fd, highWaterMark, flush: true });
    return new IncomingFile(spare.path, stream, encodePart10Header(meta), meta.transferSyntaxUid, Promise.resolve(spare.fd), Promise.resolve());
  }

  get failure(): Error | undefined {
    return this.#failure;
  }

  async write(fragment: Buffer): Promise<void> {
    // The header is still read and hashed after a write error, so the answer is "out of
    // resources" (from `durable`), not a dataset that looks truncated.
    this.#hash.update(fragment);
    this.#size += fragment.length;
    const sniffed = this.#sniffer.push(fragment);
    if (this.#header) this.#writeHeaderCorked();
    // A stream destroyed by a write error never drains: its failure is reported by `durable`.
    if (!this.#failure && !this.#stream.destroyed && !this.#stream.write(fragment) && !this.#stream.destroyed) await drained(this.#stream);
    this.#unflushed += fragment.length;
    if (this.#unflushed >= flushEvery && !this.#flushing) this.#flushWritten();
    await sniffed;
  }

  /**
   * Queues the header with the stream corked until the event loop's next turn: the fragments that
   * arrived in the same socket reads (a small instance often all of them) join it in one write
   * instead of the header going out alone, one trip through the thread pool less per instance.
   */
  #writeHeaderCorked(): void {
    const header = this.#header!;
    this.#header = undefined;
    if (this.#failure || this.#stream.destroyed) return;
    this.#stream.cork();
    this.#stream.write(header);
    setImmediate(() => this.#stream.uncork());
  }

  /** Starts an fdatasync of what the stream has written; never awaited by the transfer itself. */
  #flushWritten(): void {
    const fd = this.#fd;
    if (fd === undefined || this.#failure || this.#stream.destroyed) return;
    this.#unflushed = 0;
    this.#flushing = new Promise<void>((resolve) => {
      fdatasync(fd, (error) => {
        // Linux reports a writeback error to one fsync only: this may be the one that sees it.
        if (error) this.#failure ??= error;
        this.#flushing = undefined;
        resolve();
      });
    });
  }

  /**
   * Ends the transfer: returns what was received at once, and `durable`, which resolves once the
   * file is flushed, fsynced and closed, or rejects when any write failed (disk full, I/O error).
   * The caller can overlap the fsync with its own work, and must await `durable` before relying on
   * the file.
   */
  async complete(): Promise<CompletedFile & { durable: Promise<void> }> {
    const sniff = await this.#sniffer.finish();
    if (this.#header) this.#writeHeaderCorked(); // an empty dataset: the file is its header
    const durable = (async () => {
      // The descriptor must stay open (and not be reused) until a running flush is done with it.
      await this.#flushing;
      if (!this.#stream.destroyed) {
        const closed = once(this.#stream, 'close').catch(() => {});
        this.#stream.end();
        await closed;
      }
      if (this.#failure) throw this.#failure;
    })();
    durable.catch(() => {}); // observed by the caller; never an unhandled rejection
    return { tempPath: this.tempPath, sizeBytes: this.#size, sha256: this.#hash.digest('hex'), sniff, named: this.#named, durable };
  }

  /** Abandons the transfer: closes and removes the temporary file. Never throws. */
  async discard(): Promise<void> {
    this.#sniffer.dispose();
    await this.#flushing;
    if (!this.#stream.closed) {
      const closed = once(this.#stream, 'close').catch(() => {});
      this.#stream.destroy();
      await closed;
    }
    await unlink(this.tempPath).catch(() => {});
  }
}

function drained(stream: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed) return resolve();
    const done = () => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}
