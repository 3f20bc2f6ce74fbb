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
import { longestNameGroup, readDescriptive, readIdentifier, readParsed, type ValueFinding } from './value-findings.ts';

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
  studyId?: string;
  referringPhysicianName?: string;
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
  studyId: string | null;
  referringPhysicianName: string | null;
  modality: string | null;
  seriesNumber: number | null;
  seriesDescription: string | null;
  instanceNumber: number | null;
  storagePath: string;
  sizeBytes: number;
  sha256: string;
  callingAeTitle: string | null;
  remoteAddress: string | null;
  /** Values indexed otherwise than the dataset holds them, or over their VR's length. */
  findings: ValueFinding[];
}

const uidFields = ['sopInstanceUid', 'sopClassUid', 'transferSyntaxUid', 'studyInstanceUid', 'seriesInstanceUid'] as const;

/**
 * Validates the identifying fields (a UID or identifier the index cannot key on is a refusal:
 * DomainError 'invalid'; value-findings.ts) and reads the descriptive ones leniently (a malformed
 * date is indexed as absent), listing what it could not keep exactly.
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
    issues.push({ message: 'storagePath must be a relative path inside the DICOM storage folder', location: 'storagePath' });
  }
  if (!Number.isSafeInteger(instance.sizeBytes) || instance.sizeBytes < 0) {
    issues.push({ message: 'sizeBytes must be a non-negative integer', location: 'sizeBytes' });
  }
  const sha256 = typeof instance.sha256 === 'string' ? instance.sha256.toLowerCase() : '';
  if (!/^[0-9a-f]{64}$/.test(sha256)) issues.push({ message: 'sha256 must be 64 hex digits', location: 'sha256' });
  if (issues.length > 0) throw new DomainError('invalid', issues.map((issue) => issue.message).join('; '), issues);

  const findings: ValueFinding[] = [];
  // PS3.5 table 6.2-1: LO 64, SH 16, PN 64 per component group, CS 16 characters.
  const modalityText = cleanText(instance.modality, Number.MAX_SAFE_INTEGER);
  return {
    ...uids,
    patientId: readIdentifier('PatientID', instance.patientId, 64, findings),
    patientName: readDescriptive('PatientName', instance.patientName, 64, findings, longestNameGroup),
    patientBirthDate: readParsed('PatientBirthDate', instance.patientBirthDate, parseDicomDate(instance.patientBirthDate), 'DA', findings),
    patientSex: readParsed('PatientSex', instance.patientSex, parseSex(instance.patientSex), 'M, F or O', findings),
    studyDate: readParsed('StudyDate', instance.studyDate, parseDicomDate(instance.studyDate), 'DA', findings),
    studyTime: readParsed('StudyTime', instance.studyTime, parseDicomTime(instance.studyTime), 'TM', findings),
    timezoneOffsetFromUtc: cleanText(instance.timezoneOffsetFromUtc, 16) ?? null,
    accessionNumber: readIdentifier('AccessionNumber', instance.accessionNumber, 16, findings),
    studyDescription: readDescriptive('StudyDescription', instance.studyDescription, 64, findings),
    studyId: readDescriptive('StudyID', instance.studyId, 16, findings),
    referringPhysicianName: readDescriptive('ReferringPhysicianName', instance.referringPhysicianName, 64, findings, longestNameGroup),
    modality: readParsed('Modality', modalityText, modalityText && modalityText.length <= 16 ? parseModality(modalityText) : undefined, 'CS of 16 characters', findings),
    seriesNumber: readParsed('SeriesNumber', instance.seriesNumber, parseIntegerString(instance.seriesNumber), 'IS', findings),
    seriesDescription: readDescriptive('SeriesDescription', instance.seriesDescription, 64, findings),
    instanceNumber: readParsed('InstanceNumber', instance.instanceNumber, parseIntegerString(instance.instanceNumber), 'IS', findings),
    storagePath,
    sizeBytes: instance.sizeBytes,
    sha256,
    callingAeTitle: cleanText(instance.callingAeTitle, 16) ?? null,
    remoteAddress: cleanText(instance.remoteAddress, 64) ?? null,
    findings,
  };
}
