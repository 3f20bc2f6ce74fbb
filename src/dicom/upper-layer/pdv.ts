import { abortReason, UpperLayerError } from './pdu-types.ts';

/** One presentation data value item of a P-DATA-TF PDU (PS3.8 9.3.5.1, annex E.2). */
export interface Pdv {
  contextId: number;
  isCommand: boolean;
  isLast: boolean;
  /** The fragment as views of the PDU body's parts (one or more; none for an empty fragment). */
  fragment: Buffer[];
  fragmentLength: number;
}

const itemHeaderLength = 6;

/** Splits a P-DATA-TF body, given in parts, into its PDV items; a PDV must fit in its PDU. */
export function parsePdvs(parts: Buffer[]): Pdv[] {
  const reader = new PartsReader(parts);
  const pdvs: Pdv[] = [];
  while (reader.remaining > 0) {
    if (reader.remaining < itemHeaderLength) throw new UpperLayerError('truncated PDV item', abortReason.invalidPduParameterValue);
    const header = reader.bytes(itemHeaderLength);
    const length = header.readUInt32BE(0);
    if (length < 2 || length - 2 > reader.remaining) {
      throw new UpperLayerError('PDV item length does not fit its PDU', abortReason.invalidPduParameterValue);
    }
    const control = header[5]!;
    pdvs.push({
      contextId: header[4]!,
      isCommand: (control & 0x01) !== 0,
      isLast: (control & 0x02) !== 0,
      fragment: reader.views(length - 2),
      fragmentLength: length - 2,
    });
  }
  if (pdvs.length === 0) throw new UpperLayerError('P-DATA-TF without a PDV item', abortReason.invalidPduParameterValue);
  return pdvs;
}

/** Reads through a list of buffers as one byte sequence without joining them. */
class PartsReader {
  readonly #parts: Buffer[];
  #index = 0;
  #offset = 0;
  remaining: number;

  constructor(parts: Buffer[]) {
    this.#parts = parts;
    this.remaining = parts.reduce((sum, part) => sum + part.length, 0);
  }

  /** The next `length` bytes in one buffer (copied only when they straddle two parts). */
  bytes(length: number): Buffer {
    const views = this.views(length);
    return views.length === 1 ? views[0]! : Buffer.concat(views);
  }

  /** The next `length` bytes as views of the parts that hold them. */
  views(length: number): Buffer[] {
    const views: Buffer[] = [];
    for (let wanted = length; wanted > 0; ) {
      const part = this.#parts[this.#index]!;
      const take = Math.min(wanted, part.length - this.#offset);
      if (take > 0) views.push(part.subarray(this.#offset, this.#offset + take));
      this.#offset += take;
      wanted -= take;
      if (this.#offset === part.length) {
        this.#index++;
        this.#offset = 0;
      }
    }
    this.remaining -= length;
    return views;
  }
}
