/**
 * Converts a dataset between Implicit and Explicit VR Little Endian (PS3.5 7.1, A.1, A.2), and
 * from Explicit VR Big Endian (A.3, retired) to either, as its bytes pass, for a retrieve whose
 * peer cannot take the syntax an instance is stored in. Between the little endian syntaxes every
 * value keeps its bytes and only element headers change; from big endian, the values of binary
 * VRs are byte-swapped by their VR's unit too (UN, whose unit is unknown, is not). Implicit VR is
 * the default transfer syntax that many modalities send, and a C-GET requestor such as dcmtk's
 * getscu proposes one context per SOP class, which the listener accepts in one syntax: without
 * this an instance stored in another could not be retrieved at all. dcmtk's own SCPs,
 * dcm4chee-arc and Orthanc convert between these syntaxes the same way.
 *
 * - Sequences and items are written with undefined lengths: a re-encoded item has another length,
 *   and a delimited one needs none, so the conversion streams without holding a sequence.
 * - Implicit to explicit: each VR comes from the data dictionary (dcmjs's); a private creator is
 *   LO; any other element the dictionary does not know (private ones included) is UN, which is
 *   what PS3.5 6.2.2 says a receiver of an unknown element should keep, its value bytes (a private
 *   sequence of defined length included) read as implicit VR as CP-246 has it. An element of
 *   undefined length is a sequence. "US or SS" is written US and "OB or OW" OW (same bytes).
 *   A value too long for its VR's 16-bit length field is written UN.
 * - Explicit to implicit: the VR is dropped; an undefined-length UN is a sequence in implicit VR.
 * - Group lengths (gggg,0000) are left out: the lengths they state change with the headers, and
 *   PS3.5 7.2 lets them be absent.
 */
import { formatTag, itemDelimitationTag, itemTag, longVrs, sequenceDelimitationTag, undefinedLength } from './dataset-walker.ts';
import { dictionaryEntry } from './dicom-dictionary.ts';

export type LittleEndianSyntax = 'implicit-little' | 'explicit-little';
export type SourceSyntax = LittleEndianSyntax | 'explicit-big';

interface Frame {
  kind: 'dataset' | 'sequence';
  /** Absolute end offset for a defined length; undefined for a delimited one. */
  end: number | undefined;
  /** How the frame's content is encoded in the source. */
  syntax: SourceSyntax;
}

const maxDepth = 64;
/** dcmjs's codes for elements whose VR depends on other attributes ("US or SS": see explicitVrOf). */
const ambiguousVrs: Record<string, string> = { ox: 'OW', lt: 'OW', up: 'UL' };
const pixelRepresentationTag = 0x00280103;
/** PS3.5 7.3: the byte-swapping unit of each binary VR, for a big endian source. */
const swapUnits: Record<string, number> = { AT: 2, OW: 2, SS: 2, US: 2, FL: 4, OF: 4, OL: 4, SL: 4, UL: 4, FD: 8, OD: 8, OV: 8, SV: 8, UV: 8 };

export class ConversionError extends Error {}

/**
 * The VR an implicit VR element is given in explicit VR. "US or SS" (pixel values such as
 * Smallest Image Pixel Value) follows Pixel Representation (PS3.5 A.1 c), as dcmtk reads it: a
 * signed image's -1000 written US would read 64536.
 */
function explicitVrOf(tag: number, pixelRepresentation: number): string {
  const group = tag >>> 16;
  const element = tag & 0xffff;
  if (group % 2 === 1) return element >= 0x0010 && element <= 0x00ff ? 'LO' : 'UN';
  const vr = dictionaryEntry(tag)?.vr;
  if (!vr) return 'UN';
  if (vr === 'xs') return pixelRepresentation === 1 ? 'SS' : 'US';
  return ambiguousVrs[vr] ?? (/^[A-Z]{2}$/.test(vr) ? vr : 'UN');
}

function tagBytes(tag: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt16LE(tag >>> 16, 0);
  bytes.writeUInt16LE(tag & 0xffff, 2);
  return bytes;
}

/** An element header in the target syntax (`vr` unused in implicit VR). */
function header(target: LittleEndianSyntax, tag: number, vr: string, length: number): Buffer {
  if (target === 'implicit-little') {
    const bytes = Buffer.alloc(8);
    tagBytes(tag).copy(bytes);
    bytes.writeUInt32LE(length, 4);
    return bytes;
  }
  const written = !longVrs.has(vr) && length > 0xffff ? 'UN' : vr;
  const long = longVrs.has(written);
  const bytes = Buffer.alloc(long ? 12 : 8);
  tagBytes(tag).copy(bytes);
  bytes.write(written, 4, 'latin1');
  if (long) bytes.writeUInt32LE(length, 8);
  else bytes.writeUInt16LE(length, 6);
  return bytes;
}

const delimiter = (tag: number): Buffer => Buffer.concat([tagBytes(tag), Buffer.alloc(4)]);

/**
 * Fed with the source dataset's bytes in order; gives the converted bytes as they are known.
 * Throws ConversionError when the source is not a well-formed dataset of its syntax.
 */
export class LittleEndianConversion {
  readonly #target: LittleEndianSyntax;
  #stack: Frame[];
  #buffer: Buffer = Buffer.alloc(0);
  #position = 0; // absolute offset of #buffer[0]
  /** Value bytes still to pass through (byte-swapped by #swapUnit when not 1), or (dropped) to skip. */
  #copy = 0;
  #drop = false;
  #swapUnit = 1;
  /** The last Pixel Representation read (0 unsigned, 1 signed), for "US or SS" elements. */
  #pixelRepresentation = 0;
  /** The start of a unit to swap that the last chunk cut. */
  #carry: Buffer = Buffer.alloc(0);

  constructor(source: SourceSyntax, target: LittleEndianSyntax) {
    this.#target = target;
    this.#stack = [{ kind: 'dataset', end: undefined, syntax: source }];
  }

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let data = chunk;
    if (this.#copy > 0) {
      const passed = Math.min(this.#copy, data.length);
      this.#pass(data.subarray(0, passed), out);
      this.#copy -= passed;
      this.#position += passed;
      data = data.subarray(passed);
    }
    if (data.length === 0) return out;
    this.#buffer = this.#buffer.length === 0 ? data : Buffer.concat([this.#buffer, data]);
    this.#convert(out);
    return out;
  }

  /** The source ended: gives what is left, or throws when it ended inside an element or item. */
  end(): Buffer[] {
    const out: Buffer[] = [];
    this.#closeFinishedFrames(out);
    if (this.#copy > 0 || this.#buffer.length > 0 || this.#stack.length > 1) throw new ConversionError('the dataset ends inside an element, item or sequence');
    return out;
  }

  /** Value bytes on their way out: as they are, swapped unit by unit, or dropped. */
  #pass(bytes: Buffer, out: Buffer[]): void {
    if (this.#drop || bytes.length === 0) return;
    if (this.#swapUnit === 1) {
      out.push(bytes);
      return;
    }
    const joined = this.#carry.length > 0 ? Buffer.concat([this.#carry, bytes]) : Buffer.from(bytes);
    const whole = joined.length - (joined.length % this.#swapUnit);
    this.#carry = Buffer.from(joined.subarray(whole));
    const units = joined.subarray(0, whole);
    if (this.#swapUnit === 2) units.swap16();
    else if (this.#swapUnit === 4) units.swap32();
    else units.swap64();
    out.push(units);
    // A value whose length is not a multiple of its unit (malformed) keeps its last bytes as they are.
    if (this.#copy - bytes.length === 0 && this.#carry.length > 0) {
      out.push(this.#carry);
      this.#carry = Buffer.alloc(0);
    }
  }

  #closeFinishedFrames(out: Buffer[]): void {
    for (let frame = this.#top(); frame.end !== undefined && this.#position >= frame.end; frame = this.#top()) {
      if (this.#position > frame.end) throw new ConversionError('an element runs past the end of its item or sequence');
      this.#stack.pop();
      out.push(delimiter(frame.kind === 'dataset' ? itemDelimitationTag : sequenceDelimitationTag));
    }
  }

  #top(): Frame {
    return this.#stack[this.#stack.length - 1]!;
  }

  #convert(out: Buffer[]): void {
    const buffer = this.#buffer;
    let offset = 0;
    const consume = (count: number) => {
      offset += count;
      this.#position += count;
    };
    while (true) {
      if (this.#copy > 0) {
        const passed = Math.min(this.#copy, buffer.length - offset);
        this.#pass(buffer.subarray(offset, offset + passed), out);
        this.#copy -= passed;
        consume(passed);
        if (this.#copy > 0) break;
      }
      this.#closeFinishedFrames(out);
      const frame = this.#top();
      const available = buffer.length - offset;
      if (available < 8) break;
      const big = frame.syntax === 'explicit-big';
      const u16 = (at: number) => (big ? buffer.readUInt16BE(at) : buffer.readUInt16LE(at));
      const u32 = (at: number) => (big ? buffer.readUInt32BE(at) : buffer.readUInt32LE(at));
      const tag = ((u16(offset) << 16) | u16(offset + 2)) >>> 0;

      if (frame.kind === 'sequence') {
        const length = u32(offset + 4);
        consume(8);
        if (tag === itemTag) {
          if (this.#stack.length >= maxDepth) throw new ConversionError('sequences nested too deeply');
          out.push(Buffer.concat([tagBytes(itemTag), Buffer.from([0xff, 0xff, 0xff, 0xff])]));
          this.#stack.push({ kind: 'dataset', end: length === undefinedLength ? undefined : this.#position + length, syntax: frame.syntax });
        } else if (tag === sequenceDelimitationTag && frame.end === undefined) {
          this.#stack.pop();
          out.push(delimiter(sequenceDelimitationTag));
        } else {
          throw new ConversionError(`unexpected tag ${formatTag(tag)} inside a sequence`);
        }
        continue;
      }

      if (tag === itemDelimitationTag) {
        if (this.#stack.length === 1 || frame.end !== undefined) throw new ConversionError('item delimiter outside an undefined-length item');
        consume(8);
        this.#stack.pop();
        out.push(delimiter(itemDelimitationTag));
        continue;
      }

      let headerLength = 8;
      let length: number;
      let vr: string;
      if (frame.syntax === 'implicit-little') {
        length = buffer.readUInt32LE(offset + 4);
        vr = length === undefinedLength ? 'SQ' : explicitVrOf(tag, this.#pixelRepresentation);
      } else {
        vr = buffer.toString('latin1', offset + 4, offset + 6);
        if (!/^[A-Z]{2}$/.test(vr)) throw new ConversionError(`element ${formatTag(tag)} has no valid VR`);
        if (longVrs.has(vr)) {
          if (available < 12) break;
          headerLength = 12;
          length = u32(offset + 8);
        } else {
          length = u16(offset + 6);
        }
      }
      if (tag === pixelRepresentationTag && length === 2) {
        if (available < headerLength + 2) break;
        this.#pixelRepresentation = u16(offset + headerLength);
      }
      consume(headerLength);

      if (vr === 'SQ' || length === undefinedLength) {
        if (length === undefinedLength && vr !== 'SQ' && vr !== 'UN') throw new ConversionError(`element ${formatTag(tag)} of VR ${vr} has an undefined length (encapsulated pixel data is not converted)`);
        if (this.#stack.length >= maxDepth) throw new ConversionError('sequences nested too deeply');
        out.push(header(this.#target, tag, 'SQ', undefinedLength));
        // PS3.5 6.2.2: an undefined-length UN holds its items in implicit VR little endian.
        const itemSyntax: SourceSyntax = vr === 'UN' ? 'implicit-little' : frame.syntax;
        this.#stack.push({ kind: 'sequence', end: length === undefinedLength ? undefined : this.#position + length, syntax: itemSyntax });
        continue;
      }
      this.#drop = (tag & 0xffff) === 0x0000;
      this.#swapUnit = big ? (swapUnits[vr] ?? 1) : 1;
      if (!this.#drop) out.push(header(this.#target, tag, vr, length));
      this.#copy = length;
    }
    this.#buffer = offset >= buffer.length ? Buffer.alloc(0) : Buffer.from(buffer.subarray(offset));
  }
}
