/**
 * A stored instance's dataset parsed by dcmjs, with its text read by Specific Character Set as the
 * index reads it (src/storage/dicom/dataset/charset.ts).
 *
 * dcmjs decodes text by the first value of Specific Character Set alone: a dataset with code
 * extensions (`\ISO 2022 IR 87`, `\ISO 2022 IR 149`: how Japanese and Korean modalities write
 * names) or with a term dcmjs does not know (`ISO_IR100`) made it throw, so WADO-RS metadata left
 * such an instance out without a word and its frames were a 500; and it read the items of
 * sequences as Latin-1 whatever the dataset declared. Here dcmjs still parses the structure, but
 * every text value, at any depth, goes through the service's own decoder, so metadata says what
 * QIDO-RS and C-FIND say. Items that declare a character set of their own (rare) are read in the
 * dataset's.
 */
import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import { CharacterSets } from '../storage/dicom/dataset/charset.ts';
import { longVrs, type ByteSyntax } from '../storage/dicom/dataset/dataset-walker.ts';
import { byteSyntaxOf } from '../storage/dicom/dataset/header-sniffer.ts';
import { readFileMeta } from '../storage/dicom/stored-identity.ts';

export type DcmjsDict = Record<string, { vr: string; Value: unknown[] }>;

interface TextDecoding {
  decode(view: DataView): string;
}

/** dcmjs's read stream, as far as it is used here (the package ships no type declarations). */
interface ReadStream {
  offset: number;
  decoder: TextDecoding;
  slice(start: number, end: number): ArrayBuffer;
  increment(length: number): void;
  setComplete(): void;
}

/** The slice of dcmjs used here. `_read` and `_normalizeSyntax` are what its readFile calls. */
interface Dcmjs {
  data: {
    ReadBufferStream: new (buffer: ArrayBuffer) => ReadStream;
    DicomMessage: {
      _read(stream: ReadStream, syntax: string, options: { untilTag: string | null; includeUntilTagValue: boolean; ignoreErrors: boolean }): DcmjsDict;
      _normalizeSyntax(syntax: string): string;
    };
  };
  log: { setLevel(level: string): void };
}

const dcmjs = createRequire(import.meta.url)('dcmjs') as Dcmjs;
dcmjs.log.setLevel('error');

/** A dcmjs stream that keeps one text decoder for itself and every item read from it. */
class CharsetStream extends dcmjs.data.ReadBufferStream {
  constructor(buffer: ArrayBuffer, decoding: TextDecoding) {
    super(buffer);
    this.decoder = decoding;
  }

  /** dcmjs sets a WHATWG decoder from value 1 of Specific Character Set: the decoder given stays. */
  setDecoder(): void {}

  /** Sequence items are read from sub-streams, which dcmjs would give a Latin-1 decoder. */
  more(length: number): ReadStream {
    const part = new CharsetStream(this.slice(this.offset, this.offset + length), this.decoder);
    this.increment(length);
    part.setComplete();
    return part;
  }
}

const deflated = '1.2.840.10008.1.2.1.99';
const explicitLittle = '1.2.840.10008.1.2.1';
const specificCharacterSetTag = 0x00080005;

/**
 * Parses the dataset of a Part-10 file this service wrote, up to `untilTag` (excluded) if given.
 * Throws when the bytes do not parse (a head cut short included). `file` is the caller's own copy
 * of the bytes, and is changed: its Specific Character Set value is blanked (sparing it would take
 * one more copy of an instance read whole for its frames, up to 64 MiB).
 */
export function parseStoredDataset(file: Buffer, untilTag?: string): DcmjsDict {
  const meta = readFileMeta(file);
  if (!meta) throw new Error('not a Part-10 file with a File Meta group');
  let syntax = meta.transferSyntaxUid;
  let dataset = file.subarray(meta.datasetOffset);
  if (syntax === deflated) {
    dataset = inflateRawSync(dataset);
    syntax = explicitLittle;
  }
  const charsetValue = findTopLevelValue(dataset, byteSyntaxOf(syntax), specificCharacterSetTag);
  const charsets = new CharacterSets(charsetValue && dataset.toString('latin1', charsetValue.start, charsetValue.end));
  // dcmjs refuses several values or an unknown term; decoding is ours, so it need not see them.
  if (charsetValue) dataset.fill(0x20, charsetValue.start, charsetValue.end);
  const decoding: TextDecoding = {
    // Person-name delimiters restore the initial sets too: harmless in other text, as encoders
    // switch back to a single-byte set before them (PS3.5 6.1.2.5.3).
    decode: (view) => charsets.decode(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), 'person-name').text,
  };
  const arrayBuffer = dataset.buffer.slice(dataset.byteOffset, dataset.byteOffset + dataset.length) as ArrayBuffer;
  const stream = new CharsetStream(arrayBuffer, decoding);
  return dcmjs.data.DicomMessage._read(stream, dcmjs.data.DicomMessage._normalizeSyntax(syntax), { untilTag: untilTag ?? null, includeUntilTagValue: false, ignoreErrors: false });
}

/**
 * Where the value of a top-level element lies, scanning from the start; for an element that comes
 * early (Specific Character Set is (0008,0005)). Undefined when absent, or past an element whose
 * length is undefined.
 */
function findTopLevelValue(dataset: Buffer, syntax: ByteSyntax, wanted: number): { start: number; end: number } | undefined {
  const big = syntax === 'explicit-big';
  let offset = 0;
  while (offset + 8 <= dataset.length) {
    const group = big ? dataset.readUInt16BE(offset) : dataset.readUInt16LE(offset);
    const element = big ? dataset.readUInt16BE(offset + 2) : dataset.readUInt16LE(offset + 2);
    const tag = ((group << 16) | element) >>> 0;
    if (tag > wanted) return undefined;
    let header = 8;
    let length: number;
    if (syntax === 'implicit-little') {
      length = dataset.readUInt32LE(offset + 4);
    } else {
      const vr = dataset.toString('latin1', offset + 4, offset + 6);
      if (longVrs.has(vr)) {
        if (offset + 12 > dataset.length) return undefined;
        header = 12;
        length = big ? dataset.readUInt32BE(offset + 8) : dataset.readUInt32LE(offset + 8);
      } else {
        length = big ? dataset.readUInt16BE(offset + 6) : dataset.readUInt16LE(offset + 6);
      }
    }
    if (length === 0xffffffff) return undefined;
    const start = offset + header;
    if (tag === wanted) return start + length <= dataset.length ? { start, end: start + length } : undefined;
    offset = start + length;
  }
  return undefined;
}
