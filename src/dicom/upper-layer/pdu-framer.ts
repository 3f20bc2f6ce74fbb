import { abortReason, pduType, UpperLayerError, type Pdu, type PduTypeCode } from './pdu-types.ts';

const headerLength = 6;
const maxParts = 16;
const knownTypes = new Set<number>(Object.values(pduType));

/**
 * Cuts the TCP byte stream into PDUs (PS3.8 9.3.1: type, reserved, 32-bit big-endian length).
 * The type is checked as soon as the 6-byte header is in, so garbage is refused at once, and a
 * length above the limit is refused before any of its body is buffered: memory per connection is
 * bounded by one PDU.
 */
export class PduFramer {
  #chunks: Buffer[] = [];
  #buffered = 0;
  #maxBodyLength: (type: PduTypeCode) => number;

  constructor(maxBodyLength: (type: PduTypeCode) => number) {
    this.#maxBodyLength = maxBodyLength;
  }

  /** Bytes received that do not yet form a whole PDU. */
  get pendingBytes(): number {
    return this.#buffered;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
  }

  /** The next whole PDU, or undefined when more bytes are needed. Throws on a malformed header. */
  next(): Pdu | undefined {
    if (this.#buffered < headerLength) return undefined;
    const header = this.#peek(headerLength);
    const type = header[0]!;
    if (!knownTypes.has(type)) {
      throw new UpperLayerError(`unrecognised PDU type 0x${type.toString(16).padStart(2, '0')}`, abortReason.unrecognizedPdu);
    }
    const length = header.readUInt32BE(2);
    const limit = this.#maxBodyLength(type as PduTypeCode);
    if (length > limit) {
      throw new UpperLayerError(`PDU of ${length} bytes exceeds the limit of ${limit}`, abortReason.invalidPduParameterValue);
    }
    if (this.#buffered < headerLength + length) return undefined;
    this.#take(headerLength);
    return { type: type as PduTypeCode, parts: this.#take(length) };
  }

  #peek(length: number): Buffer {
    const first = this.#chunks[0]!;
    if (first.length >= length) return first.subarray(0, length);
    const bytes = Buffer.alloc(length);
    let filled = 0;
    for (const chunk of this.#chunks) {
      filled += chunk.copy(bytes, filled, 0, Math.min(chunk.length, length - filled));
      if (filled === length) break;
    }
    return bytes;
  }

  /**
   * The next `length` bytes as views of the chunks that hold them. A PDU that came in many small
   * reads is joined instead: a few copied bytes cost less than thousands of tiny buffers.
   */
  #take(length: number): Buffer[] {
    const parts: Buffer[] = [];
    let whole = 0; // leading chunks consumed entirely
    for (let remaining = length; remaining > 0; ) {
      const chunk = this.#chunks[whole]!;
      if (chunk.length <= remaining) {
        parts.push(chunk);
        remaining -= chunk.length;
        whole++;
      } else {
        parts.push(chunk.subarray(0, remaining));
        this.#chunks[whole] = chunk.subarray(remaining);
        remaining = 0;
      }
    }
    this.#chunks.splice(0, whole);
    this.#buffered -= length;
    return parts.length > maxParts ? [Buffer.concat(parts, length)] : parts;
  }
}
