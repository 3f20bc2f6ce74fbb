/**
 * Writes a multipart/related answer of stored files (WADO-RS) straight to the HTTP response.
 * Part headers and file bytes are copied into a few fixed-size chunks (each file read directly
 * into a chunk, several small files sharing one), and a chunk is written again only once the
 * socket has taken it (its write callback). So an answer holds at most chunksPerAnswer chunks
 * whatever its instances' sizes, a slow client holds back the reads (no chunk comes free until
 * the kernel took one), and the chunks are reused rather than left to the garbage collector: a
 * new buffer per read made V8 run full collections for the external memory and let the resident
 * size climb by hundreds of MB under load (docs/performance.md, WADO-RS). Files the stored-file
 * cache holds, or reads whole for it, are copied into the same chunks from memory.
 */
import { close, open, read } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import type { StoredFileCache } from '../storage/dicom/stored-file-cache.ts';

export interface StoredPart {
  /** The part's header lines, each ending in CRLF (the blank line after them is added here). */
  headers: string;
  path: string;
  /** The recorded size: a read that stops short of the chunk's end at this size needs no read for end-of-file. */
  sizeBytes: number;
  /** The index row of the instance: its key in the stored-file cache. */
  instanceId?: string;
  /** The bytes to send instead of the file's, made from it (another transfer syntax asked for). */
  converted?: AsyncIterable<Buffer>;
}

const openFile = promisify(open);
const readFile = promisify(read);
const chunkBytes = 512 * 1024;
const chunksPerAnswer = 2;
/** Chunks kept between answers, so that a busy origin allocates none. */
const spareLimit = 8;
const spare: Buffer[] = [];

/** The answer could not go on: the client left, or the socket failed. */
class AnswerClosedError extends Error {
  override readonly name = 'AnswerClosedError';
}

class ChunkWriter {
  readonly #response: ServerResponse;
  readonly #free: Buffer[] = [];
  #allocated = 0;
  #chunk: Buffer | undefined;
  #filled = 0;
  #wake: (() => void) | undefined;
  #closed = false;
  #finished = false;

  constructor(response: ServerResponse) {
    this.#response = response;
    response.once('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  /** ASCII text (part headers, boundaries), always far smaller than a chunk. */
  async text(text: string): Promise<void> {
    let chunk = await this.#current();
    if (chunk.length - this.#filled < text.length) chunk = await this.#flush();
    this.#filled += chunk.write(text, this.#filled, 'latin1');
  }

  /** The file's bytes as they are on disk, to its end. */
  async file(path: string, sizeBytes: number): Promise<void> {
    const fd = await openFile(path, 'r');
    try {
      let total = 0;
      for (;;) {
        let chunk = await this.#current();
        if (this.#filled === chunk.length) chunk = await this.#flush();
        const wanted = chunk.length - this.#filled;
        const { bytesRead } = await readFile(fd, chunk, this.#filled, wanted, total);
        this.#filled += bytesRead;
        total += bytesRead;
        // A regular file reads short only at its end; the recorded size confirms it without one more read.
        if (bytesRead === 0 || (bytesRead < wanted && total === sizeBytes)) return;
      }
    } finally {
      close(fd, () => {});
    }
  }

  /** Bytes already in memory (a file from the stored-file cache), copied into the chunks. */
  async bytes(bytes: Buffer): Promise<void> {
    let at = 0;
    while (at < bytes.length) {
      let chunk = await this.#current();
      if (this.#filled === chunk.length) chunk = await this.#flush();
      const copied = bytes.copy(chunk, this.#filled, at);
      this.#filled += copied;
      at += copied;
    }
  }

  /** Writes what is filled and ends the answer. */
  end(): void {
    if (this.#filled > 0) this.#write();
    this.#finished = true;
    for (const chunk of this.#free.splice(0)) keepSpare(chunk);
    if (this.#chunk) keepSpare(this.#chunk);
    this.#chunk = undefined;
    this.#response.end();
  }

  async #current(): Promise<Buffer> {
    if (this.#chunk) return this.#chunk;
    this.#chunk = await this.#take();
    this.#filled = 0;
    return this.#chunk;
  }

  /** Writes the filled chunk and starts the next. */
  async #flush(): Promise<Buffer> {
    this.#write();
    return this.#current();
  }

  #write(): void {
    const chunk = this.#chunk!;
    const filled = this.#filled;
    this.#chunk = undefined;
    this.#filled = 0;
    this.#response.write(chunk.subarray(0, filled), (error) => {
      if (error) return;
      if (this.#finished) keepSpare(chunk);
      else this.#free.push(chunk);
      this.#wake?.();
    });
  }

  async #take(): Promise<Buffer> {
    for (;;) {
      if (this.#closed) throw new AnswerClosedError('the answer was closed before it was complete');
      const free = this.#free.pop();
      if (free) return free;
      if (this.#allocated < chunksPerAnswer) {
        this.#allocated++;
        return spare.pop() ?? Buffer.allocUnsafeSlow(chunkBytes);
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }
}

function keepSpare(chunk: Buffer): void {
  if (spare.length < spareLimit) spare.push(chunk);
}

/**
 * Sends every part, then the closing delimiter. The status line and headers are already written.
 * A file that cannot be read after the answer began ends the connection (the client sees no
 * closing delimiter); that error is returned for the log, as is none when the client left.
 */
export async function sendStoredParts(response: ServerResponse, boundary: string, parts: AsyncIterable<StoredPart>, cache?: StoredFileCache): Promise<Error | undefined> {
  const writer = new ChunkWriter(response);
  try {
    for await (const part of parts) {
      await writer.text(`--${boundary}\r\n${part.headers}\r\n`);
      const cached = cache && part.instanceId !== undefined && !part.converted ? await cache.read(part.instanceId, part.path, part.sizeBytes) : undefined;
      if (part.converted) {
        for await (const bytes of part.converted) await writer.bytes(bytes);
      } else if (cached) {
        try {
          await writer.bytes(cached.bytes);
        } finally {
          cached.release();
        }
      } else await writer.file(part.path, part.sizeBytes);
      await writer.text('\r\n');
    }
    await writer.text(`--${boundary}--\r\n`);
    writer.end();
    return undefined;
  } catch (error) {
    response.destroy();
    return error instanceof AnswerClosedError ? undefined : (error as Error);
  }
}
