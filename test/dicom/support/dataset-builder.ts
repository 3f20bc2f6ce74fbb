import { writeFile } from 'node:fs/promises';
import { encodePart10Header } from '../../../src/storage/dicom/dataset/part10-header.ts';

/** One element of a test dataset; a string value is written as ASCII, a Buffer byte for byte. */
export interface ElementSpec {
  tag: number;
  vr: string;
  value: string | Buffer;
}

const secondaryCapture = '1.2.840.10008.5.1.4.1.1.7';
const explicitLittle = '1.2.840.10008.1.2.1';
const longVrs = new Set(['OB', 'OW', 'SQ', 'UN', 'UT', 'UC', 'UR']);

/** Explicit VR little endian, elements in tag order, values padded to even length (PS3.5 7.1). */
export function encodeDataset(elements: readonly ElementSpec[]): Buffer {
  const sorted = [...elements].sort((a, b) => a.tag - b.tag);
  return Buffer.concat(
    sorted.map(({ tag, vr, value }) => {
      let bytes = typeof value === 'string' ? Buffer.from(value, 'latin1') : value;
      if (bytes.length % 2 === 1) bytes = Buffer.concat([bytes, Buffer.from([vr === 'UI' ? 0x00 : vr === 'OB' ? 0x00 : 0x20])]);
      const long = longVrs.has(vr);
      const header = Buffer.alloc(long ? 12 : 8);
      header.writeUInt16LE(tag >>> 16, 0);
      header.writeUInt16LE(tag & 0xffff, 2);
      header.write(vr, 4, 'latin1');
      if (long) header.writeUInt32LE(bytes.length, 8);
      else header.writeUInt16LE(bytes.length, 6);
      return Buffer.concat([header, bytes]);
    }),
  );
}

export interface TestInstance {
  sopInstanceUid: string;
  studyInstanceUid: string;
  seriesInstanceUid: string;
  /** The dataset bytes, as they must be stored. */
  dataset: Buffer;
}

/**
 * A small Secondary Capture instance (2x2 pixels) with the index attributes given; `attributes`
 * adds or replaces elements (by tag). Written as a Part-10 file for storescu to send.
 */
export async function writeTestInstance(path: string, uids: { study: string; series: string; instance: string }, attributes: readonly ElementSpec[]): Promise<TestInstance> {
  const pixels = Buffer.alloc(8);
  const base: ElementSpec[] = [
    { tag: 0x00080016, vr: 'UI', value: secondaryCapture },
    { tag: 0x00080018, vr: 'UI', value: uids.instance },
    { tag: 0x00080060, vr: 'CS', value: 'OT' },
    { tag: 0x00100020, vr: 'LO', value: 'TEST-ID' },
    { tag: 0x0020000d, vr: 'UI', value: uids.study },
    { tag: 0x0020000e, vr: 'UI', value: uids.series },
    { tag: 0x00280002, vr: 'US', value: Buffer.from([1, 0]) },
    { tag: 0x00280004, vr: 'CS', value: 'MONOCHROME2' },
    { tag: 0x00280010, vr: 'US', value: Buffer.from([2, 0]) },
    { tag: 0x00280011, vr: 'US', value: Buffer.from([2, 0]) },
    { tag: 0x00280100, vr: 'US', value: Buffer.from([16, 0]) },
    { tag: 0x00280101, vr: 'US', value: Buffer.from([16, 0]) },
    { tag: 0x00280102, vr: 'US', value: Buffer.from([15, 0]) },
    { tag: 0x00280103, vr: 'US', value: Buffer.from([0, 0]) },
    { tag: 0x7fe00010, vr: 'OW', value: pixels },
  ];
  const replaced = new Set(attributes.map((element) => element.tag));
  const dataset = encodeDataset([...base.filter((element) => !replaced.has(element.tag)), ...attributes]);
  const header = encodePart10Header({ sopClassUid: secondaryCapture, sopInstanceUid: uids.instance, transferSyntaxUid: explicitLittle, sourceAeTitle: '' });
  await writeFile(path, Buffer.concat([header, dataset]));
  return { sopInstanceUid: uids.instance, studyInstanceUid: uids.study, seriesInstanceUid: uids.series, dataset };
}
