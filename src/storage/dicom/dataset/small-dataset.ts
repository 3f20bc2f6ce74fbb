import { createRequire } from 'node:module';
import { inflateRawSync } from 'node:zlib';
import { transferSyntax } from '../uids.ts';
import { DatasetWalker } from './dataset-walker.ts';
import { byteSyntaxOf } from './header-sniffer.ts';
import { encodePart10Header } from './part10-header.ts';

/** The slice of dcmjs used here (the package ships no type declarations). */
interface Dcmjs {
  data: {
    DicomMessage: { readFile(buffer: ArrayBuffer, options?: Record<string, unknown>): { dict: unknown } };
    DicomMetaDictionary: { naturalizeDataset(dict: unknown): Record<string, unknown> };
  };
}

const dcmjs = createRequire(import.meta.url)('dcmjs') as Dcmjs;

/** Datasets read in memory (N-CREATE / N-SET attribute lists) are small by nature; this caps them. */
export const maxSmallDatasetLength = 1024 * 1024;

/**
 * Parses a small dataset received in `transferSyntaxUid` (any uncompressed syntax, deflate
 * included) with dcmjs, returning its naturalized form (keyword -> value, sequences as arrays).
 * dcmjs reads Part-10 input, so the bytes are given a file meta header first; they are not changed.
 */
export function readSmallDataset(bytes: Buffer, transferSyntaxUid: string, sopClassUid: string): Record<string, unknown> {
  // dcmjs quietly drops a truncated trailing element; the walker checks the structure first.
  const plain = transferSyntaxUid === transferSyntax.deflatedExplicitLittle ? inflateRawSync(bytes, { maxOutputLength: 4 * maxSmallDatasetLength }) : bytes;
  const walker = new DatasetWalker({ syntax: byteSyntaxOf(transferSyntaxUid), wanted: new Set(), maxValueLength: 0 });
  walker.push(plain);
  walker.end();
  if (walker.error) throw new Error(`malformed dataset: ${walker.error}`);
  const header = encodePart10Header({ sopClassUid, sopInstanceUid: '1.2', transferSyntaxUid, sourceAeTitle: '' });
  const file = Buffer.concat([header, bytes]);
  const arrayBuffer = file.buffer.slice(file.byteOffset, file.byteOffset + file.length) as ArrayBuffer;
  const message = dcmjs.data.DicomMessage.readFile(arrayBuffer);
  return dcmjs.data.DicomMetaDictionary.naturalizeDataset(message.dict);
}
