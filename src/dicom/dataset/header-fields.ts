import { textDecoderFor } from './charset.ts';

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
  studyDescription: 0x00081030,
  seriesDescription: 0x0008103e,
  patientName: 0x00100010,
  patientId: 0x00100020,
  patientBirthDate: 0x00100030,
  patientSex: 0x00100040,
  studyInstanceUid: 0x0020000d,
  seriesInstanceUid: 0x0020000e,
  seriesNumber: 0x00200011,
  instanceNumber: 0x00200013,
} as const;

export type HeaderField = Exclude<keyof typeof headerTags, 'specificCharacterSet'>;
export type HeaderFields = Partial<Record<HeaderField, string>>;

export const wantedHeaderTags: ReadonlySet<number> = new Set(Object.values(headerTags));
export const lastHeaderTag = Math.max(...Object.values(headerTags));

// Text VRs whose characters follow Specific Character Set (PS3.5 6.1.2.3); the others are ASCII.
const charsetFields = new Set<HeaderField>(['patientName', 'patientId', 'accessionNumber', 'studyDescription', 'seriesDescription']);

/** Turns the kept raw values into strings; multi-valued values keep their backslashes. */
export function decodeHeaderFields(values: ReadonlyMap<number, Buffer>): HeaderFields {
  const charset = values.get(headerTags.specificCharacterSet)?.toString('latin1');
  const decoder = textDecoderFor(charset);
  const fields: HeaderFields = {};
  for (const [name, elementTag] of Object.entries(headerTags) as [keyof typeof headerTags, number][]) {
    if (name === 'specificCharacterSet') continue;
    const raw = values.get(elementTag);
    if (raw === undefined) continue;
    const text = charsetFields.has(name) ? decoder.decode(raw) : raw.toString('latin1');
    // PS3.5 6.2: UIDs pad with NUL, other strings with spaces.
    fields[name] = text.replace(/[\0 ]+$/, '').replace(/^ +/, '');
  }
  return fields;
}
