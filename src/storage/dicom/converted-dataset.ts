/**
 * Which transfer syntax a retrieved instance may be sent in (C-GET and C-MOVE on a presentation
 * context, WADO-RS when asked for one): the one it is stored in, always; or, for an instance stored uncompressed (implicit or explicit VR little
 * endian, deflated, explicit VR big endian), Implicit or Explicit VR Little Endian, converted as
 * it is sent (little-endian-conversion.ts). Compressed instances go only as stored: nothing
 * decodes pixel data here.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';
import { LittleEndianConversion, type LittleEndianSyntax, type SourceSyntax } from './dataset/little-endian-conversion.ts';
import { encodePart10Header } from './dataset/part10-header.ts';
import { readFileMeta } from './stored-identity.ts';
import { transferSyntax } from './uids.ts';

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

/**
 * A stored Part-10 file as a Part-10 file in `sentAs` (WADO-RS asked for that syntax): a File Meta
 * header of its own naming it, then the converted dataset.
 */
export async function* convertedPart10File(path: string, identity: { sopClassUid: string; sopInstanceUid: string }, stored: string, sentAs: string): AsyncGenerator<Buffer> {
  const handle = await open(path, 'r');
  let size: number;
  let meta: ReturnType<typeof readFileMeta>;
  try {
    size = (await handle.stat()).size;
    const head = Buffer.alloc(Math.min(size, 4096));
    await handle.read(head, 0, head.length, 0);
    meta = readFileMeta(head);
  } finally {
    await handle.close();
  }
  if (!meta) throw new Error(`stored file ${path} has no readable File Meta group`);
  yield encodePart10Header({ sopClassUid: identity.sopClassUid, sopInstanceUid: identity.sopInstanceUid, transferSyntaxUid: sentAs, sourceAeTitle: '' });
  yield* convertedDataset(path, meta.datasetOffset, size - meta.datasetOffset, stored, sentAs);
}
