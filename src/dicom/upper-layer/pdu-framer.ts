import { abortReason, pduType, UpperLayerError, type Pdu, type PduTypeCode } from './pdu-types.ts';

const headerLength = 6;
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
    const whole = this.#take(headerLength + length);
    return { type: type as PduTypeCode, body: whole.subarray(headerLength) };
  }

  #peek(length: number): Buffer {
    if (this.#chunks[0]!.length >= length) return this.#chunks[0]!.subarray(0, length);
    return Buffer.concat(this.#chunks).subarray(0, length);
  }

  #take(length: number): Buffer {
    const first = this.#chunks[0]!;
    let result: Buffer;
    if (first.length >= length) {
      result = first.subarray(0, length);
      if (first.length === length) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(length);
    } else {
      const all = Buffer.concat(this.#chunks);
      result = all.subarray(0, length);
      this.#chunks = all.length > length ? [all.subarray(length)] : [];
    }
    this.#buffered -= length;
    return result;
  }
}
