import type { ValueFinding } from '../../../domain/imaging/value-findings.ts';
import { CharacterSets, type DelimiterRule } from './charset.ts';

/** Top-level attributes the index needs (PS3.6 tags), read from the dataset header. */
export const headerTags = {
  specificCharacterSet: 0x00080005,
  sopClassUid: 0x00080016,
  sopInstanceUid: 0x00080018,
  studyDate: 0x00080020,
  studyTime: 0x00080030,
  timezoneOffsetFromUtc: 0x00080201,
  accessionNumber: 0x00080050,
  modality: 0x00080060,
  referringPhysicianName: 0x00080090,
  studyDescription: 0x00081030,
  seriesDescription: 0x0008103e,
  patientName: 0x00100010,
  patientId: 0x00100020,
  patientBirthDate: 0x00100030,
  patientSex: 0x00100040,
  studyInstanceUid: 0x0020000d,
  seriesInstanceUid: 0x0020000e,
  studyId: 0x00200010,
  seriesNumber: 0x00200011,
  instanceNumber: 0x00200013,
} as const;

export type HeaderField = Exclude<keyof typeof headerTags, 'specificCharacterSet'>;
export type HeaderFields = Partial<Record<HeaderField, string>>;

/** PS3.6 keywords, as findings name attributes. */
const keywords: Record<keyof typeof headerTags, string> = {
  specificCharacterSet: 'SpecificCharacterSet',
  sopClassUid: 'SOPClassUID',
  sopInstanceUid: 'SOPInstanceUID',
  studyDate: 'StudyDate',
  studyTime: 'StudyTime',
  timezoneOffsetFromUtc: 'TimezoneOffsetFromUTC',
  accessionNumber: 'AccessionNumber',
  modality: 'Modality',
  referringPhysicianName: 'ReferringPhysicianName',
  studyDescription: 'StudyDescription',
  seriesDescription: 'SeriesDescription',
  patientName: 'PatientName',
  patientId: 'PatientID',
  patientBirthDate: 'PatientBirthDate',
  patientSex: 'PatientSex',
  studyInstanceUid: 'StudyInstanceUID',
  seriesInstanceUid: 'SeriesInstanceUID',
  studyId: 'StudyID',
  seriesNumber: 'SeriesNumber',
  instanceNumber: 'InstanceNumber',
};

export const wantedHeaderTags: ReadonlySet<number> = new Set(Object.values(headerTags));
export const lastHeaderTag = Math.max(...Object.values(headerTags));

// Text VRs whose characters follow Specific Character Set (PS3.5 6.1.2.3), with the delimiters
// their values use; the other VRs read here (UI, DA, TM, CS, IS) are ASCII.
const charsetFields: Partial<Record<HeaderField, DelimiterRule>> = {
  patientName: 'person-name',
  referringPhysicianName: 'person-name',
  patientId: 'string',
  studyId: 'string',
  accessionNumber: 'string',
  studyDescription: 'string',
  seriesDescription: 'string',
};

/** Identifiers: never read approximately (value-findings.ts). */
const identifierFields = new Set<HeaderField>(['patientId', 'accessionNumber', 'sopInstanceUid', 'studyInstanceUid', 'seriesInstanceUid', 'sopClassUid']);

export interface DecodedHeader {
  fields: HeaderFields;
  /** Values read otherwise than the dataset declares them. */
  findings: ValueFinding[];
  /** An identifier too long to be read: the instance cannot be indexed by it. */
  unreadIdentifier?: string;
}

/** Turns the kept raw values into strings; multi-valued values keep their backslashes. */
export function decodeHeaderFields(values: ReadonlyMap<number, Buffer>, oversized: ReadonlyMap<number, number> = new Map()): DecodedHeader {
  const findings: ValueFinding[] = [];
  const charsets = new CharacterSets(values.get(headerTags.specificCharacterSet)?.toString('latin1'));
  if (charsets.unknownTerms.length > 0) {
    findings.push({ attribute: keywords.specificCharacterSet, problem: `names no known character set: ${charsets.unknownTerms.join(', ')}` });
  }
  const decoded: DecodedHeader = { fields: {}, findings };
  for (const [name, elementTag] of Object.entries(headerTags) as [keyof typeof headerTags, number][]) {
    if (name === 'specificCharacterSet') continue;
    const length = oversized.get(elementTag);
    if (length !== undefined) {
      if (identifierFields.has(name)) decoded.unreadIdentifier ??= keywords[name];
      else findings.push({ attribute: keywords[name], problem: `${length} bytes long, more than is read: indexed as absent` });
      continue;
    }
    const raw = values.get(elementTag);
    if (raw === undefined) continue;
    const rule = charsetFields[name];
    let text = raw.toString('latin1');
    if (rule) {
      const read = charsets.decode(raw, rule);
      if (read.exact) text = read.text;
      else if (!identifierFields.has(name)) {
        text = read.text;
        findings.push({ attribute: keywords[name], problem: 'holds bytes its character set does not define: indexed with U+FFFD for them' });
      } else {
        // An identifier read approximately could equal another one: byte for byte, distinct
        // values stay distinct (ISO 8859-1 gives each byte its own character).
        findings.push({ attribute: keywords[name], problem: 'holds bytes its character set does not define: indexed byte for byte as ISO 8859-1' });
      }
    }
    // PS3.5 6.2: UIDs pad with NUL, other strings with spaces.
    decoded.fields[name] = text.replace(/[\0 ]+$/, '').replace(/^ +/, '');
  }
  return decoded;
}
