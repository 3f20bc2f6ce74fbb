import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';

/**
 * Writes a synthetic Part-10 Secondary Capture instance (explicit VR little endian, no patient
 * data) whose pixel data is `rows` x `columns` 16-bit samples, streamed to disk so the test never
 * holds it in memory. Returns the offset of the dataset in the file.
 */
export async function writeSyntheticInstance(
  path: string,
  uids: { study: string; series: string; instance: string },
  rows: number,
  columns: number,
): Promise<{ datasetOffset: number }> {
  const element = (group: number, elementNumber: number, vr: string, value: Buffer) => {
    const long = ['OB', 'OW', 'SQ', 'UN', 'UT'].includes(vr);
    const header = Buffer.alloc(long ? 12 : 8);
    header.writeUInt16LE(group, 0);
    header.writeUInt16LE(elementNumber, 2);
    header.write(vr, 4, 'latin1');
    if (long) header.writeUInt32LE(value.length, 8);
    else header.writeUInt16LE(value.length, 6);
    return Buffer.concat([header, value]);
  };
  const text = (value: string, pad = ' ') => Buffer.from(value.length % 2 ? value + pad : value, 'latin1');
  const uid = (value: string) => text(value, '\0');
  const us = (value: number) => {
    const bytes = Buffer.alloc(2);
    bytes.writeUInt16LE(value, 0);
    return bytes;
  };
  const sopClass = '1.2.840.10008.5.1.4.1.1.7';
  const metaBody = Buffer.concat([
    element(0x0002, 0x0001, 'OB', Buffer.from([0, 1])),
    element(0x0002, 0x0002, 'UI', uid(sopClass)),
    element(0x0002, 0x0003, 'UI', uid(uids.instance)),
    element(0x0002, 0x0010, 'UI', uid('1.2.840.10008.1.2.1')),
    element(0x0002, 0x0012, 'UI', uid('1.2.3.4.5.6.7')),
  ]);
  const groupLength = Buffer.alloc(4);
  groupLength.writeUInt32LE(metaBody.length, 0);
  const pixelLength = rows * columns * 2;
  const pixelHeader = Buffer.alloc(12);
  pixelHeader.writeUInt16LE(0x7fe0, 0);
  pixelHeader.writeUInt16LE(0x0010, 2);
  pixelHeader.write('OW', 4, 'latin1');
  pixelHeader.writeUInt32LE(pixelLength, 8);
  const head = Buffer.concat([
    Buffer.alloc(128),
    Buffer.from('DICM', 'latin1'),
    element(0x0002, 0x0000, 'UL', groupLength),
    metaBody,
  ]);
  const dataset = Buffer.concat([
    element(0x0008, 0x0016, 'UI', uid(sopClass)),
    element(0x0008, 0x0018, 'UI', uid(uids.instance)),
    element(0x0008, 0x0060, 'CS', text('OT')),
    element(0x0010, 0x0010, 'PN', text('Synthetic^Large')),
    element(0x0010, 0x0020, 'LO', text('SYNTH-LARGE')),
    element(0x0020, 0x000d, 'UI', uid(uids.study)),
    element(0x0020, 0x000e, 'UI', uid(uids.series)),
    element(0x0028, 0x0002, 'US', us(1)),
    element(0x0028, 0x0004, 'CS', text('MONOCHROME2')),
    element(0x0028, 0x0010, 'US', us(rows)),
    element(0x0028, 0x0011, 'US', us(columns)),
    element(0x0028, 0x0100, 'US', us(16)),
    element(0x0028, 0x0101, 'US', us(16)),
    element(0x0028, 0x0102, 'US', us(15)),
    element(0x0028, 0x0103, 'US', us(0)),
    pixelHeader,
  ]);
  const out = createWriteStream(path);
  out.write(head);
  out.write(dataset);
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < block.length; i += 2) block.writeUInt16LE((i * 7) & 0xffff, i);
  for (let written = 0; written < pixelLength; written += block.length) {
    if (!out.write(block.subarray(0, Math.min(block.length, pixelLength - written)))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return { datasetOffset: head.length };
}

/** SHA-256 of a file from an offset, streamed. */
export async function hashFile(path: string, start = 0): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { start })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
