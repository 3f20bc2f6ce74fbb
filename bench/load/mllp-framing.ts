/**
 * MLLP framing (HL7 v2 Implementation Guide, Appendix C: Minimal Lower Layer Protocol): a message
 * travels as VT (0x0B), the message, FS (0x1C), CR (0x0D). A TCP read may hold part of a frame or
 * several frames, so bytes are scanned until the end marker rather than read per packet.
 */
export const startBlock = 0x0b;
export const endBlock = 0x1c;
export const carriageReturn = 0x0d;
const endMarker = Buffer.from([endBlock, carriageReturn]);

export function frame(message: string): Buffer {
  const body = Buffer.from(message, 'utf8');
  const framed = Buffer.allocUnsafe(body.length + 3);
  framed[0] = startBlock;
  body.copy(framed, 1);
  framed[body.length + 1] = endBlock;
  framed[body.length + 2] = carriageReturn;
  return framed;
}

/** Accumulates bytes and hands out each complete frame's content. */
export class FrameReader {
  #buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, onFrame: (content: Buffer) => void): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const start = this.#buffer.indexOf(startBlock);
      if (start < 0) {
        this.#buffer = Buffer.alloc(0);
        return;
      }
      const end = this.#buffer.indexOf(endMarker, start + 1);
      if (end < 0) {
        if (start > 0) this.#buffer = this.#buffer.subarray(start);
        return;
      }
      onFrame(this.#buffer.subarray(start + 1, end));
      this.#buffer = this.#buffer.subarray(end + 2);
    }
  }
}
