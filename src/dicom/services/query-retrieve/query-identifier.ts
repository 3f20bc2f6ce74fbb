/**
 * C-FIND, C-GET and C-MOVE identifiers (PS3.4 C.4): small datasets of top-level keys, read from
 * and written in implicit or explicit VR little endian. Only the keys of the dictionary below are
 * read; the others of a request are not supported, so they are left out of its answers (PS3.4
 * C.4.1.1.3.2 lets an SCP leave out keys it does not support).
 */
import { transferSyntax } from '../../../storage/dicom/uids.ts';
import { CharacterSets, type DelimiterRule } from '../../../storage/dicom/dataset/charset.ts';
import { DatasetWalker } from '../../../storage/dicom/dataset/dataset-walker.ts';

type Vr = 'AE' | 'CS' | 'DA' | 'IS' | 'LO' | 'PN' | 'SH' | 'TM' | 'UI';

/** PS3.6 tags and VRs of the keys handled, by keyword. */
export const identifierKeys = {
  SpecificCharacterSet: { tag: 0x00080005, vr: 'CS' },
  SOPClassUID: { tag: 0x00080016, vr: 'UI' },
  SOPInstanceUID: { tag: 0x00080018, vr: 'UI' },
  StudyDate: { tag: 0x00080020, vr: 'DA' },
  StudyTime: { tag: 0x00080030, vr: 'TM' },
  AccessionNumber: { tag: 0x00080050, vr: 'SH' },
  QueryRetrieveLevel: { tag: 0x00080052, vr: 'CS' },
  RetrieveAETitle: { tag: 0x00080054, vr: 'AE' },
  InstanceAvailability: { tag: 0x00080056, vr: 'CS' },
  FailedSOPInstanceUIDList: { tag: 0x00080058, vr: 'UI' },
  Modality: { tag: 0x00080060, vr: 'CS' },
  ModalitiesInStudy: { tag: 0x00080061, vr: 'CS' },
  ReferringPhysicianName: { tag: 0x00080090, vr: 'PN' },
  StudyDescription: { tag: 0x00081030, vr: 'LO' },
  SeriesDescription: { tag: 0x0008103e, vr: 'LO' },
  AvailableTransferSyntaxUID: { tag: 0x00083002, vr: 'UI' },
  PatientName: { tag: 0x00100010, vr: 'PN' },
  PatientID: { tag: 0x00100020, vr: 'LO' },
  PatientBirthDate: { tag: 0x00100030, vr: 'DA' },
  PatientSex: { tag: 0x00100040, vr: 'CS' },
  StudyInstanceUID: { tag: 0x0020000d, vr: 'UI' },
  SeriesInstanceUID: { tag: 0x0020000e, vr: 'UI' },
  StudyID: { tag: 0x00200010, vr: 'SH' },
  SeriesNumber: { tag: 0x00200011, vr: 'IS' },
  InstanceNumber: { tag: 0x00200013, vr: 'IS' },
  NumberOfPatientRelatedStudies: { tag: 0x00201200, vr: 'IS' },
  NumberOfStudyRelatedSeries: { tag: 0x00201206, vr: 'IS' },
  NumberOfStudyRelatedInstances: { tag: 0x00201208, vr: 'IS' },
  NumberOfSeriesRelatedInstances: { tag: 0x00201209, vr: 'IS' },
} as const satisfies Record<string, { tag: number; vr: Vr }>;

export type IdentifierKey = keyof typeof identifierKeys;

const keyByTag = new Map<number, IdentifierKey>(Object.entries(identifierKeys).map(([keyword, key]) => [key.tag, keyword as IdentifierKey]));

// PS3.5 6.1.2.3: these VRs follow Specific Character Set; the others are ASCII.
const textRules: Partial<Record<Vr, DelimiterRule>> = { PN: 'person-name', LO: 'string', SH: 'string' };

/** Every key of the dictionary present in the identifier, zero-length ones included, decoded. */
export type Identifier = Map<IdentifierKey, string>;

export class IdentifierError extends Error {}

/** Reads a request identifier received in `transferSyntaxUid` (a queryTransferSyntaxes member). */
export function readIdentifier(bytes: Buffer, transferSyntaxUid: string): Identifier {
  const walker = new DatasetWalker({
    syntax: transferSyntaxUid === transferSyntax.implicitLittle ? 'implicit-little' : 'explicit-little',
    wanted: new Set(keyByTag.keys()),
    maxValueLength: bytes.length,
  });
  walker.push(bytes);
  walker.end();
  if (walker.error) throw new IdentifierError(`malformed identifier: ${walker.error}`);
  const charsets = new CharacterSets(walker.values.get(identifierKeys.SpecificCharacterSet.tag)?.toString('latin1'));
  const identifier: Identifier = new Map();
  for (const [tag, raw] of walker.values) {
    const keyword = keyByTag.get(tag)!;
    const rule = textRules[identifierKeys[keyword].vr];
    const text = rule ? charsets.decode(raw, rule).text : raw.toString('latin1');
    identifier.set(keyword, text.replace(/[\0 ]+$/, '').replace(/^ +/, ''));
  }
  return identifier;
}

/**
 * Writes an answer identifier; keys in any order. Values outside ASCII are written in UTF-8 with
 * Specific Character Set ISO_IR 192 (PS3.5 6.1.2.5.3), so no repertoire has to be negotiated.
 */
export function writeIdentifier(values: Iterable<[IdentifierKey, string]>, transferSyntaxUid: string): Buffer {
  const entries = new Map(values);
  entries.delete('SpecificCharacterSet');
  if ([...entries.values()].some((value) => /[^\x00-\x7f]/.test(value))) entries.set('SpecificCharacterSet', 'ISO_IR 192');
  const explicit = transferSyntaxUid !== transferSyntax.implicitLittle;
  const sorted = [...entries].sort(([a], [b]) => identifierKeys[a].tag - identifierKeys[b].tag);
  return Buffer.concat(sorted.map(([keyword, value]) => element(identifierKeys[keyword], value, explicit)));
}

function element(key: { tag: number; vr: Vr }, value: string, explicit: boolean): Buffer {
  let bytes = Buffer.from(value, 'utf8');
  // PS3.5 7.1: even lengths; UIDs pad with NUL, text with a space.
  if (bytes.length % 2 === 1) bytes = Buffer.concat([bytes, Buffer.from([key.vr === 'UI' ? 0x00 : 0x20])]);
  const header = Buffer.alloc(8);
  header.writeUInt16LE(key.tag >>> 16, 0);
  header.writeUInt16LE(key.tag & 0xffff, 2);
  if (explicit) {
    // PS3.5 7.1.2: these VRs have a 16-bit length; values over it cannot be answered in them.
    header.write(key.vr, 4, 'latin1');
    if (bytes.length > 0xfffe) bytes = bytes.subarray(0, 0xfffe);
    header.writeUInt16LE(bytes.length, 6);
  } else {
    header.writeUInt32LE(bytes.length, 4);
  }
  return Buffer.concat([header, bytes]);
}
