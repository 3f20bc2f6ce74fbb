/**
 * A streaming walk over a DICOM dataset's element structure (PS3.5 section 7), fed with the bytes
 * as they arrive. It keeps the values of a few top-level elements and skips everything else by
 * length, so memory stays bounded whatever the dataset size: pixel data is never held. It handles
 * implicit and explicit VR, little and big endian, defined and undefined lengths, nested sequences
 * and encapsulated fragments; and it notices a dataset that ends in the middle of an element.
 */

export type ByteSyntax = 'implicit-little' | 'explicit-little' | 'explicit-big';

export interface WalkerOptions {
  syntax: ByteSyntax;
  /** Top-level tags (group << 16 | element) whose values to keep. */
  wanted: ReadonlySet<number>;
  /** Values longer than this are not kept (they are skipped as if unwanted). */
  maxValueLength: number;
  /** Stop at the first top-level tag above this one (elements are in ascending order, PS3.5 7.1). */
  stopAfterTag?: number;
}

interface Frame {
  kind: 'dataset' | 'sequence';
  /** Absolute end offset for a defined length; undefined for an undefined length. */
  end: number | undefined;
  syntax: ByteSyntax;
}

/** PS3.5 7.5: the undefined length, and the tags of items, item delimiters and sequence delimiters. */
export const undefinedLength = 0xffffffff;
export const itemTag = 0xfffee000;
export const itemDelimitationTag = 0xfffee00d;
export const sequenceDelimitationTag = 0xfffee0dd;
// PS3.5 7.1.2: VRs with a 2-byte reserved field and a 4-byte length in explicit VR.
export const longVrs: ReadonlySet<string> = new Set(['OB', 'OD', 'OF', 'OL', 'OV', 'OW', 'SQ', 'SV', 'UC', 'UN', 'UR', 'UT', 'UV']);
const maxDepth = 64;

export class DatasetWalker {
  readonly values = new Map<number, Buffer>();
  /** Wanted tags whose values were longer than maxValueLength, with their lengths: not kept. */
  readonly oversized = new Map<number, number>();
  #options: WalkerOptions;
  #stack: Frame[];
  #buffer: Buffer = Buffer.alloc(0);
  #position = 0; // absolute offset of #buffer[0]
  #skip = 0;
  #done = false;
  #error: string | undefined;

  constructor(options: WalkerOptions) {
    this.#options = options;
    this.#stack = [{ kind: 'dataset', end: undefined, syntax: options.syntax }];
  }

  /** True once the walk needs no more bytes (stop tag reached, or an error). */
  get done(): boolean {
    return this.#done;
  }

  /** Why the dataset is not well-formed, if it is not. */
  get error(): string | undefined {
    return this.#error;
  }

  push(chunk: Buffer): void {
    if (this.#done || chunk.length === 0) return;
    let data = chunk;
    if (this.#skip > 0) {
      const skipped = Math.min(this.#skip, data.length);
      this.#skip -= skipped;
      this.#position += skipped;
      data = data.subarray(skipped);
      if (data.length === 0) return;
    }
    this.#buffer = this.#buffer.length === 0 ? data : Buffer.concat([this.#buffer, data]);
    this.#walk();
  }

  /** The dataset ended: it must end on an element boundary at the top level. */
  end(): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#skip > 0 || this.#buffer.length > 0) this.#error = 'the dataset ends in the middle of an element';
    else if (this.#stack.some((frame, depth) => depth > 0 && frame.end === undefined)) this.#error = 'the dataset ends inside an undefined-length sequence';
    else if (this.#stack.some((frame) => frame.end !== undefined && frame.end !== this.#position)) this.#error = 'the dataset ends inside a sequence';
  }

  #fail(message: string): void {
    this.#error = message;
    this.#done = true;
    this.#buffer = Buffer.alloc(0);
  }

  #walk(): void {
    let offset = 0;
    const buffer = this.#buffer;
    const consume = (count: number) => {
      offset += count;
      this.#position += count;
    };
    while (!this.#done) {
      if (this.#skip > 0) {
        const skipped = Math.min(this.#skip, buffer.length - offset);
        this.#skip -= skipped;
        consume(skipped);
        if (this.#skip > 0) break;
      }
      const frame = this.#stack[this.#stack.length - 1]!;
      if (frame.end !== undefined && this.#position >= frame.end) {
        if (this.#position > frame.end) return this.#fail('an element runs past the end of its item or sequence');
        this.#stack.pop();
        continue;
      }
      const available = buffer.length - offset;
      if (available < 8) break;
      const big = frame.syntax === 'explicit-big';
      const group = big ? buffer.readUInt16BE(offset) : buffer.readUInt16LE(offset);
      const element = big ? buffer.readUInt16BE(offset + 2) : buffer.readUInt16LE(offset + 2);
      const tag = ((group << 16) | element) >>> 0;

      if (frame.kind === 'sequence') {
        const length = big ? buffer.readUInt32BE(offset + 4) : buffer.readUInt32LE(offset + 4);
        consume(8);
        if (tag === itemTag) {
          if (length === undefinedLength) {
            if (this.#stack.length >= maxDepth) return this.#fail('sequences nested too deeply');
            this.#stack.push({ kind: 'dataset', end: undefined, syntax: frame.syntax });
          } else {
            // A defined-length item (or an encapsulated fragment) is skipped whole.
            this.#skip = length;
          }
        } else if (tag === sequenceDelimitationTag && frame.end === undefined) {
          this.#stack.pop();
        } else {
          return this.#fail(`unexpected tag ${formatTag(tag)} inside a sequence`);
        }
        continue;
      }

      if (tag === itemDelimitationTag) {
        if (this.#stack.length === 1 || frame.end !== undefined) return this.#fail('item delimiter outside an undefined-length item');
        consume(8);
        this.#stack.pop();
        continue;
      }
      const topLevel = this.#stack.length === 1;
      if (topLevel && this.#options.stopAfterTag !== undefined && tag > this.#options.stopAfterTag) {
        this.#done = true;
        break;
      }

      let headerLength = 8;
      let length: number;
      let vr: string | undefined;
      if (frame.syntax === 'implicit-little') {
        length = buffer.readUInt32LE(offset + 4);
      } else {
        vr = buffer.toString('latin1', offset + 4, offset + 6);
        if (!/^[A-Z]{2}$/.test(vr)) return this.#fail(`element ${formatTag(tag)} has no valid VR`);
        if (longVrs.has(vr)) {
          if (available < 12) break;
          headerLength = 12;
          length = big ? buffer.readUInt32BE(offset + 8) : buffer.readUInt32LE(offset + 8);
        } else {
          length = big ? buffer.readUInt16BE(offset + 6) : buffer.readUInt16LE(offset + 6);
        }
      }

      if (length === undefinedLength) {
        if (vr !== undefined && vr !== 'SQ' && vr !== 'UN' && vr !== 'OB' && vr !== 'OW') {
          return this.#fail(`element ${formatTag(tag)} of VR ${vr} has an undefined length`);
        }
        if (this.#stack.length >= maxDepth) return this.#fail('sequences nested too deeply');
        consume(headerLength);
        // PS3.5 6.2.2: an undefined-length UN holds its content in implicit VR little endian.
        this.#stack.push({ kind: 'sequence', end: undefined, syntax: vr === 'UN' ? 'implicit-little' : frame.syntax });
        continue;
      }

      const wanted = topLevel && this.#options.wanted.has(tag);
      if (wanted && length > this.#options.maxValueLength) this.oversized.set(tag, length);
      const keep = wanted && length <= this.#options.maxValueLength;
      if (keep) {
        if (available < headerLength + length) break;
        this.values.set(tag, Buffer.from(buffer.subarray(offset + headerLength, offset + headerLength + length)));
        consume(headerLength + length);
      } else {
        consume(headerLength);
        this.#skip = length;
      }
    }
    // Keep only the unconsumed tail (a partial element header or a wanted value still arriving).
    this.#buffer = offset >= buffer.length ? Buffer.alloc(0) : Buffer.from(buffer.subarray(offset));
  }
}

export function formatTag(tag: number): string {
  const hex = tag.toString(16).toUpperCase().padStart(8, '0');
  return `(${hex.slice(0, 4)},${hex.slice(4)})`;
}
