/**
 * Which transfer syntax a retrieved instance may travel in on a presentation context: the one it
 * is stored in, always; or, for an instance stored uncompressed (implicit or explicit VR little
 * endian, deflated, explicit VR big endian), Implicit or Explicit VR Little Endian, converted as
 * it is sent (little-endian-conversion.ts). Compressed instances go only as stored: nothing
 * decodes pixel data here.
 */
import { createReadStream } from 'node:fs';
import { createInflateRaw } from 'node:zlib';
import { LittleEndianConversion, type LittleEndianSyntax, type SourceSyntax } from '../../../storage/dicom/dataset/little-endian-conversion.ts';
import { transferSyntax } from '../../../storage/dicom/uids.ts';

const littleEndian: Record<string, LittleEndianSyntax> = {
  [transferSyntax.implicitLittle]: 'implicit-little',
  [transferSyntax.explicitLittle]: 'explicit-little',
};

/** The byte syntax of a stored instance's dataset once inflated, when it is an uncompressed one. */
function storedUncompressed(stored: string): SourceSyntax | undefined {
  if (stored === transferSyntax.deflatedExplicitLittle) return 'explicit-little';
  return stored === transferSyntax.explicitBig ? 'explicit-big' : littleEndian[stored];
}

export function canBeSentAs(stored: string, offered: string): boolean {
  return stored === offered || (storedUncompressed(stored) !== undefined && littleEndian[offered] !== undefined);
}

/** What a C-MOVE proposes for instances stored in `stored`, in order of preference. */
export function syntaxesToPropose(stored: string): string[] {
  return storedUncompressed(stored) === undefined ? [stored] : [stored, ...Object.keys(littleEndian).filter((uid) => uid !== stored)];
}

/**
 * The dataset bytes (`offset`, `length` in the stored file) in the syntax `sentAs`, which
 * canBeSentAs allowed and which differs from the stored one.
 */
export async function* convertedDataset(path: string, offset: number, length: number, stored: string, sentAs: string): AsyncGenerator<Buffer> {
  const conversion = new LittleEndianConversion(storedUncompressed(stored)!, littleEndian[sentAs]!);
  const file = createReadStream(path, { start: offset, end: offset + length - 1, highWaterMark: 256 * 1024 });
  const source = stored === transferSyntax.deflatedExplicitLittle ? file.pipe(createInflateRaw()) : file;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (storedUncompressed(stored) === littleEndian[sentAs]) yield chunk; // deflated, sent inflated
      else yield* conversion.push(chunk);
    }
    if (storedUncompressed(stored) !== littleEndian[sentAs]) yield* conversion.end();
  } finally {
    file.destroy();
  }
}
