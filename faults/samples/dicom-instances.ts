import { createHash, randomInt } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { readFixture } from '../../test/support/fixtures.ts';

/** The slice of dcmjs used here (the package ships no type declarations). */
interface DicomElement {
  vr: string;
  Value: unknown[];
}
interface DicomDict {
  meta: Record<string, DicomElement>;
  dict: Record<string, DicomElement>;
  write(): ArrayBuffer;
}
const dcmjs = createRequire(import.meta.url)('dcmjs') as { data: { DicomMessage: { readFile(buffer: ArrayBuffer): DicomDict } } };

/** One generated Part-10 file and what the service must end up holding for it. */
export interface GeneratedInstance {
  path: string;
  sopInstanceUid: string;
  studyInstanceUid: string;
  seriesInstanceUid: string;
  patientId: string;
  /** SHA-256 of the dataset bytes (the file after its group-0002 file meta). */
  datasetSha256: string;
}

let counter = 0;
const root = `2.25.${BigInt(Date.now()) * 1000n + BigInt(randomInt(1000))}`;

/** A UID under the 2.25 (UUID-derived) root, unique within and across runs (PS3.5 B.2). */
export function newUid(): string {
  counter++;
  return `${root}.${process.pid}.${counter}`.slice(0, 64);
}

/** Offset where the dataset starts: 128-byte preamble, "DICM", then group 0002 (PS3.10 7.1). */
export function datasetOffset(file: Buffer): number {
  // (0002,0000) File Meta Information Group Length, explicit VR LE: tag 4, VR 2, length 2, value 4.
  if (file.readUInt16LE(132) !== 0x0002 || file.readUInt16LE(134) !== 0x0000) throw new Error('no group length at the start of the file meta');
  return 132 + 12 + file.readUInt32LE(140);
}

export function datasetSha256(file: Buffer): string {
  return createHash('sha256').update(file.subarray(datasetOffset(file))).digest('hex');
}

/**
 * Writes a copy of a fixture with fresh Study, Series and SOP Instance UIDs and the given
 * PatientID, so that each instance sent is distinct and traceable. dcmjs rewrites the file; the
 * hash recorded is that of the bytes actually sent.
 */
export function generateInstance(dir: string, options: { fixture?: string; patientId: string; studyInstanceUid?: string; seriesInstanceUid?: string }): GeneratedInstance {
  const source = readFixture(`dicom/${options.fixture ?? 'MR_small.dcm'}`);
  const dicom = dcmjs.data.DicomMessage.readFile(source.buffer.slice(source.byteOffset, source.byteOffset + source.byteLength) as ArrayBuffer);
  const sopInstanceUid = newUid();
  const studyInstanceUid = options.studyInstanceUid ?? newUid();
  const seriesInstanceUid = options.seriesInstanceUid ?? newUid();
  const set = (tag: string, vr: string, value: string) => {
    dicom.dict[tag] = { vr, Value: [value] };
  };
  set('00080018', 'UI', sopInstanceUid);
  set('0020000D', 'UI', studyInstanceUid);
  set('0020000E', 'UI', seriesInstanceUid);
  set('00100020', 'LO', options.patientId);
  dicom.meta['00020003'] = { vr: 'UI', Value: [sopInstanceUid] };
  // Data Set Trailing Padding (FFFC,FFFC) is dropped by SCUs on the wire (PS3.10 7.2), so a file
  // carrying it would never match what was sent.
  delete dicom.dict['FFFCFFFC'];
  delete dicom.dict['fffcfffc'];
  const bytes = Buffer.from(dicom.write());
  const path = join(dir, `${sopInstanceUid}.dcm`);
  writeFileSync(path, bytes);
  return { path, sopInstanceUid, studyInstanceUid, seriesInstanceUid, patientId: options.patientId, datasetSha256: datasetSha256(bytes) };
}
