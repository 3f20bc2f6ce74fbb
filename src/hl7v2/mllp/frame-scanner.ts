/**
 * MLLP frame scanner (HL7 v2.5.1 Appendix C, MLLP release 2: <VT> message <FS><CR>).
 *
 * A frame ends at FS wherever it falls in the byte stream, so frames split across TCP reads
 * and several frames in one read both come out whole. The CR after FS is not waited for: a sender
 * that omits it and waits for its acknowledgement would otherwise wait for ever; when it comes, it
 * is line noise between frames like any other CR. Bytes outside a frame are counted as junk
 * (reported, then discarded). A frame over the limit is not buffered: its first bytes are kept
 * (enough to address an acknowledgement) and the rest is skipped up to its end.
 */
const startBlock = 0x0b;
const endBlock = 0x1c;
const carriageReturn = 0x0d;

export type ScanEvent =
  | { kind: 'frame'; payload: Buffer }
  | { kind: 'oversized'; size: number; head: Buffer }
  | { kind: 'junk'; size: number };

export interface FrameScannerOptions {
  maxFrameBytes: number;
  /** How much of an oversized frame to keep for its acknowledgement. */
  headBytes?: number;
}

export class FrameScanner {
  readonly #maxFrameBytes: number;
  readonly #headBytes: number;
  #inFrame = false;
  #chunks: Buffer[] = [];
  #size = 0;
  #kept = 0;
  #oversized = false;
  #junk = 0;

  constructor(options: FrameScannerOptions) {
    this.#maxFrameBytes = options.maxFrameBytes;
    this.#headBytes = options.headBytes ?? 16 * 1024;
  }

  /** Feeds one TCP read; returns the events it completes, in stream order. */
  push(data: Buffer): ScanEvent[] {
    const events: ScanEvent[] = [];
    let i = 0;
    while (i < data.length) {
      if (!this.#inFrame) {
        const start = data.indexOf(startBlock, i);
        const skipped = start < 0 ? data.subarray(i) : data.subarray(i, start);
        this.#junk += countJunk(skipped);
        if (start < 0) break;
        this.#flushJunk(events);
        this.#beginFrame();
        i = start + 1;
        continue;
      }
      const end = data.indexOf(endBlock, i);
      const restart = data.indexOf(startBlock, i);
      if (restart >= 0 && (end < 0 || restart < end)) {
        // A new start block inside a frame: the sender gave up on the previous frame.
        this.#append(data.subarray(i, restart));
        this.#junk += this.#size;
        this.#beginFrame();
        i = restart + 1;
        continue;
      }
      if (end < 0) {
        this.#append(data.subarray(i));
        break;
      }
      this.#append(data.subarray(i, end));
      i = end + 1;
      if (data[i] === carriageReturn) i++;
      this.#endFrame(events);
    }
    this.#flushJunk(events);
    return events;
  }

  /** Bytes of an unfinished frame (for shutdown logging). */
  get bufferedBytes(): number {
    return this.#size;
  }

  /** Bytes of the unfinished frame held in memory (an oversized frame keeps only its head). */
  get heldBytes(): number {
    return this.#kept;
  }

  #beginFrame(): void {
    this.#inFrame = true;
    this.#chunks = [];
    this.#size = 0;
    this.#kept = 0;
    this.#oversized = false;
  }

  #append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#size += bytes.length;
    if (this.#size > this.#maxFrameBytes) this.#oversized = true;
    const room = (this.#oversized ? this.#headBytes : this.#maxFrameBytes) - this.#kept;
    if (room > 0) {
      const piece = Buffer.from(bytes.subarray(0, room));
      this.#chunks.push(piece);
      this.#kept += piece.length;
    }
  }

  #endFrame(events: ScanEvent[]): void {
    const payload = Buffer.concat(this.#chunks);
    events.push(this.#oversized ? { kind: 'oversized', size: this.#size, head: payload.subarray(0, this.#headBytes) } : { kind: 'frame', payload });
    this.#inFrame = false;
    this.#chunks = [];
    this.#size = 0;
    this.#kept = 0;
    this.#oversized = false;
  }

  #flushJunk(events: ScanEvent[]): void {
    if (this.#junk > 0) {
      events.push({ kind: 'junk', size: this.#junk });
      this.#junk = 0;
    }
  }
}

/** CR/LF between frames is common keep-alive noise, not junk worth reporting. */
function countJunk(bytes: Buffer): number {
  let n = 0;
  for (const byte of bytes) if (byte !== 0x0d && byte !== 0x0a) n++;
  return n;
}

export function frame(payload: Uint8Array): Buffer {
  return Buffer.concat([Buffer.of(startBlock), payload, Buffer.of(endBlock, carriageReturn)]);
}
