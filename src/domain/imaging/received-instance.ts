import { DomainError, type DomainIssue } from '../errors.ts';
import {
  cleanText,
  isLenientDicomUid,
  parseDicomDate,
  parseDicomTime,
  parseIntegerString,
  parseModality,
  parseSex,
} from './dicom-values.ts';

/**
 * What the DICOM listener hands the domain for one stored instance: header values as the plain
 * strings it read (no DICOM wire types), and where the file now lives. Optional fields are those
 * PS3.3 lets a dataset leave out or empty (type 2 and 3 attributes).
 */
export interface ReceivedInstance {
  sopInstanceUid: string;
  sopClassUid: string;
  transferSyntaxUid: string;
  studyInstanceUid: string;
  seriesInstanceUid: string;
  patientId?: string;
  patientName?: string;
  patientBirthDate?: string;
  patientSex?: string;
  studyDate?: string;
  studyTime?: string;
  /** Timezone Offset From UTC (0008,0201), "&ZZXX": the offset of StudyDate/StudyTime. */
  timezoneOffsetFromUtc?: string;
  accessionNumber?: string;
  studyDescription?: string;
  modality?: string;
  seriesNumber?: string;
  seriesDescription?: string;
  instanceNumber?: string;
  /** Relative to the data directory. */
  storagePath: string;
  sizeBytes: number;
  /** Lower-case hex SHA-256 of the stored dataset bytes. */
  sha256: string;
  callingAeTitle?: string;
  remoteAddress?: string;
}

/** A ReceivedInstance after validation and VR parsing: what the index stores. */
export interface NormalizedInstance {
  sopInstanceUid: string;
  sopClassUid: string;
  transferSyntaxUid: string;
  studyInstanceUid: string;
  seriesInstanceUid: string;
  patientId: string | null;
  patientName: string | null;
  patientBirthDate: string | null;
  patientSex: 'M' | 'F' | 'O' | null;
  studyDate: string | null;
  studyTime: string | null;
  timezoneOffsetFromUtc: string | null;
  accessionNumber: string | null;
  studyDescription: string | null;
  modality: string | null;
  seriesNumber: number | null;
  seriesDescription: string | null;
  instanceNumber: number | null;
  storagePath: string;
  sizeBytes: number;
  sha256: string;
  callingAeTitle: string | null;
  remoteAddress: string | null;
}

const uidFields = ['sopInstanceUid', 'sopClassUid', 'transferSyntaxUid', 'studyInstanceUid', 'seriesInstanceUid'] as const;

/**
 * Validates the identifying fields (a UID the index cannot key on is a refusal: DomainError
 * 'invalid') and parses the descriptive ones leniently (a malformed date is indexed as absent).
 */
export function normalizeReceivedInstance(instance: ReceivedInstance): NormalizedInstance {
  const issues: DomainIssue[] = [];
  const uids = {} as Record<(typeof uidFields)[number], string>;
  for (const field of uidFields) {
    const value = cleanText(instance[field], 128) ?? '';
    if (!isLenientDicomUid(value)) issues.push({ message: `${field} is not a DICOM UID`, location: field });
    uids[field] = value;
  }
  const storagePath = instance.storagePath;
  if (typeof storagePath !== 'string' || storagePath.length === 0 || storagePath.length > 1024 || storagePath.startsWith('/') || storagePath.split(/[\\/]/).includes('..') || storagePath.includes('\u0000')) {
    issues.push({ message: 'storagePath must be a relative path inside the data directory', location: 'storagePath' });
  }
  if (!Number.isSafeInteger(instance.sizeBytes) || instance.sizeBytes < 0) {
    issues.push({ message: 'sizeBytes must be a non-negative integer', location: 'sizeBytes' });
  }
  const sha256 = typeof instance.sha256 === 'string' ? instance.sha256.toLowerCase() : '';
  if (!/^[0-9a-f]{64}$/.test(sha256)) issues.push({ message: 'sha256 must be 64 hex digits', location: 'sha256' });
  if (issues.length > 0) throw new DomainError('invalid', issues.map((issue) => issue.message).join('; '), issues);

  return {
    ...uids,
    // PatientID (LO) is the key into the site's patients: 64 characters is its VR's maximum.
    patientId: cleanText(instance.patientId, 64) ?? null,
    patientName: cleanText(instance.patientName, 324) ?? null,
    patientBirthDate: parseDicomDate(instance.patientBirthDate) ?? null,
    patientSex: parseSex(instance.patientSex) ?? null,
    studyDate: parseDicomDate(instance.studyDate) ?? null,
    studyTime: parseDicomTime(instance.studyTime) ?? null,
    timezoneOffsetFromUtc: cleanText(instance.timezoneOffsetFromUtc, 16) ?? null,
    accessionNumber: cleanText(instance.accessionNumber, 64) ?? null,
    studyDescription: cleanText(instance.studyDescription) ?? null,
    modality: parseModality(instance.modality) ?? null,
    seriesNumber: parseIntegerString(instance.seriesNumber) ?? null,
    seriesDescription: cleanText(instance.seriesDescription) ?? null,
    instanceNumber: parseIntegerString(instance.instanceNumber) ?? null,
    storagePath,
    sizeBytes: instance.sizeBytes,
    sha256,
    callingAeTitle: cleanText(instance.callingAeTitle, 16) ?? null,
    remoteAddress: cleanText(instance.remoteAddress, 64) ?? null,
  };
}
