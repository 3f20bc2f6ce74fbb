/**
 * A stored instance's attributes as DICOM JSON (PS3.18 annex F), parsed by dcmjs from the head of
 * the file: parsing stops at Pixel Data, so an instance of any size costs the bytes before it.
 * Bulk data is left out (PS3.18 F.2.7 allows an origin to omit it): Pixel Data always, any other
 * binary value over 64 KiB; smaller binary values travel as InlineBinary.
 */
import { open } from 'node:fs/promises';
import { parseStoredDataset, type DcmjsDict } from './dcmjs-dataset.ts';

type DicomJsonElement = { vr: string; Value?: unknown[]; InlineBinary?: string };
export type DicomJson = Record<string, DicomJsonElement>;

const binaryVrs = new Set(['OB', 'OD', 'OF', 'OL', 'OV', 'OW', 'UN']);
const maxInlineBinary = 64 * 1024;
/** The head is read in growing steps until the attributes before Pixel Data fit. */
const headSteps = [256 * 1024, 4 * 1024 * 1024, 64 * 1024 * 1024];
const pixelData = '7FE00010';

/** Reads the attributes before Pixel Data of a Part-10 file; undefined when they cannot be parsed. */
export async function readInstanceMetadata(path: string): Promise<DicomJson | undefined> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    for (const step of headSteps) {
      const length = Math.min(size, step);
      const head = Buffer.alloc(length);
      await handle.read(head, 0, length, 0);
      try {
        return toDicomJson(parseStoredDataset(head, pixelData));
      } catch {
        if (length === size) return undefined;
      }
    }
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The whole dataset parsed (frames need Pixel Data): only for instances the caller has bounded. */
export async function readWholeInstance(path: string): Promise<DcmjsDict> {
  const handle = await open(path, 'r');
  try {
    return parseStoredDataset(await handle.readFile());
  } finally {
    await handle.close();
  }
}

const emptyAsNull = (value: unknown): unknown => (value === '' || (typeof value === 'number' && Number.isNaN(value)) ? null : value);

function toDicomJson(dict: Record<string, { vr?: string; Value?: unknown[] }>): DicomJson {
  const json: DicomJson = {};
  for (const [tag, element] of Object.entries(dict)) {
    if (tag === pixelData || !element.vr) continue;
    const { vr } = element;
    const values = element.Value ?? [];
    if (binaryVrs.has(vr)) {
      const bytes = values[0] instanceof ArrayBuffer ? Buffer.from(values[0]) : undefined;
      if (bytes && bytes.length > maxInlineBinary) continue;
      json[tag] = bytes && bytes.length > 0 ? { vr, InlineBinary: bytes.toString('base64') } : { vr };
      continue;
    }
    const converted = vr === 'SQ' ? values.map((item) => toDicomJson(item as Record<string, { vr?: string; Value?: unknown[] }>)) : values.filter((value) => value !== undefined).map(emptyAsNull);
    // PS3.18 F.2.5: an empty element has no Value (dcmjs gives [""] or [null] for one), and an
    // empty value among others is null.
    json[tag] = converted.some((value) => value !== null) ? { vr, Value: converted } : { vr };
  }
  return json;
}
