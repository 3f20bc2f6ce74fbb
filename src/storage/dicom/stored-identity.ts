import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { DatasetWalker } from './dataset/dataset-walker.ts';
import { HeaderSniffer } from './dataset/header-sniffer.ts';

export interface StoredIdentity {
  studyInstanceUid: string;
  seriesInstanceUid: string;
  sopInstanceUid: string;
}

const metaStart = 132; // PS3.10 7.1: 128-byte preamble, then "DICM"
const metaReadLength = 4096;

/**
 * The study, series and SOP Instance UIDs of a Part-10 file this service wrote (its own File Meta
 * header, then the dataset as received), for start-up recovery of a transfer caught by a crash
 * between its link into place and its index commit. Undefined when the file does not read as one.
 */
export async function readStoredIdentity(path: string): Promise<StoredIdentity | undefined> {
  const handle = await open(path, 'r');
  let head: Buffer;
  try {
    head = Buffer.alloc(metaReadLength);
    head = head.subarray(0, (await handle.read(head, 0, metaReadLength, 0)).bytesRead);
  } finally {
    await handle.close();
  }
  const meta = readFileMeta(head);
  if (!meta) return undefined;
  const sniffer = new HeaderSniffer(meta.transferSyntaxUid);
  try {
    for await (const chunk of createReadStream(path, { start: meta.datasetOffset })) await sniffer.push(chunk as Buffer);
  } catch {
    sniffer.dispose();
    return undefined;
  }
  const { fields } = await sniffer.finish();
  const { studyInstanceUid, seriesInstanceUid, sopInstanceUid } = fields;
  if (!studyInstanceUid || !seriesInstanceUid || !sopInstanceUid || sopInstanceUid !== meta.sopInstanceUid) return undefined;
  return { studyInstanceUid, seriesInstanceUid, sopInstanceUid };
}

const transferSyntaxTag = 0x00020010;
const mediaStorageSopInstanceTag = 0x00020003;
const metaTags: ReadonlySet<number> = new Set([transferSyntaxTag, mediaStorageSopInstanceTag]);

/** The File Meta group (0002) in explicit VR little endian, led by its group length. */
export function readFileMeta(head: Buffer): { transferSyntaxUid: string; sopInstanceUid: string; datasetOffset: number } | undefined {
  if (head.length < metaStart + 12 || head.toString('latin1', 128, 132) !== 'DICM') return undefined;
  if (head.readUInt16LE(metaStart) !== 0x0002 || head.readUInt16LE(metaStart + 2) !== 0x0000) return undefined;
  const datasetOffset = metaStart + 12 + head.readUInt32LE(metaStart + 8);
  if (datasetOffset > head.length) return undefined;
  const walker = new DatasetWalker({ syntax: 'explicit-little', wanted: metaTags, maxValueLength: 128 });
  walker.push(head.subarray(metaStart + 12, datasetOffset));
  walker.end();
  if (walker.error) return undefined;
  const text = (tag: number) => walker.values.get(tag)?.toString('latin1').replace(/[\0 ]+$/, '');
  const transferSyntaxUid = text(transferSyntaxTag);
  const sopInstanceUid = text(mediaStorageSopInstanceTag);
  return transferSyntaxUid && sopInstanceUid ? { transferSyntaxUid, sopInstanceUid, datasetOffset } : undefined;
}
