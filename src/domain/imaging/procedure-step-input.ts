import { DomainError, type DomainIssue } from '../errors.ts';
import { cleanText, isLenientDicomUid, parseModality } from './dicom-values.ts';

/** PS3.3 C.4.14 Performed Procedure Step Status (0040,0252). */
export const procedureStepStatuses = ['IN PROGRESS', 'COMPLETED', 'DISCONTINUED'] as const;
export type ProcedureStepStatus = (typeof procedureStepStatuses)[number];

/** One item of the Procedure Code Sequence (0008,1032), PS3.3 8.8 code sequence macro. */
export interface ProcedureCode {
  codeValue: string;
  codingSchemeDesignator?: string;
  codeMeaning?: string;
}

export interface ProcedureStepInput {
  /** Affected SOP Instance UID of the MPPS instance: the step's key. */
  sopInstanceUid: string;
  studyInstanceUid: string;
  status: ProcedureStepStatus;
  modality?: string;
  stationAeTitle?: string;
  startedAt?: Date;
  endedAt?: Date;
  procedureCode?: ProcedureCode;
}

export interface NormalizedStepInput {
  sopInstanceUid: string;
  studyInstanceUid: string;
  status: ProcedureStepStatus;
  modality?: string;
  stationAeTitle?: string;
  startedAt?: Date;
  endedAt?: Date;
  procedureCode?: { codeValue: string; codingSchemeDesignator: string | null; codeMeaning: string | null };
}

export function isProcedureStepStatus(value: unknown): value is ProcedureStepStatus {
  return typeof value === 'string' && (procedureStepStatuses as readonly string[]).includes(value);
}

/** PS3.5 table 6.2-1 AE: 1 to 16 characters, no backslash, no control characters. */
export function isAeTitle(value: string): boolean {
  return value.trim().length > 0 && value.length <= 16 && !/[\\\u0000-\u001f\u007f]/.test(value);
}

/**
 * Checks a step update in domain terms; issue locations name the input fields. UIDs follow the
 * lenient rule of stored instances, since steps over DIMSE come from the same modalities; the
 * HTTP intake applies the strict PS3.5 9.1 rule before it gets here.
 */
export function normalizeStepInput(input: ProcedureStepInput): NormalizedStepInput {
  const issues: DomainIssue[] = [];
  const sopInstanceUid = cleanText(input.sopInstanceUid, 128) ?? '';
  const studyInstanceUid = cleanText(input.studyInstanceUid, 128) ?? '';
  if (!isLenientDicomUid(sopInstanceUid)) issues.push({ message: 'sopInstanceUid is not a DICOM UID', location: 'sopInstanceUid' });
  if (!isLenientDicomUid(studyInstanceUid)) issues.push({ message: 'studyInstanceUid is not a DICOM UID', location: 'studyInstanceUid' });
  if (!isProcedureStepStatus(input.status)) {
    issues.push({ message: 'status must be IN PROGRESS, COMPLETED or DISCONTINUED', location: 'status' });
  }
  const normalized: NormalizedStepInput = { sopInstanceUid, studyInstanceUid, status: input.status };
  if (input.modality !== undefined) {
    const modality = parseModality(input.modality);
    if (modality === undefined) issues.push({ message: 'modality must be a DICOM modality code (CS, 16 characters)', location: 'modality' });
    else normalized.modality = modality;
  }
  if (input.stationAeTitle !== undefined) {
    if (!isAeTitle(input.stationAeTitle)) issues.push({ message: 'stationAeTitle must be an AE title of 1 to 16 characters', location: 'stationAeTitle' });
    else normalized.stationAeTitle = input.stationAeTitle.trim();
  }
  for (const field of ['startedAt', 'endedAt'] as const) {
    const value = input[field];
    if (value === undefined) continue;
    if (!(value instanceof Date) || Number.isNaN(value.getTime())) issues.push({ message: `${field} must be a valid date-time`, location: field });
    else normalized[field] = value;
  }
  if (normalized.startedAt && normalized.endedAt && normalized.endedAt < normalized.startedAt) {
    issues.push({ message: 'endedAt is before startedAt', location: 'endedAt' });
  }
  if (input.procedureCode !== undefined) {
    const code = input.procedureCode;
    const codeValue = cleanText(code?.codeValue, 65);
    const scheme = cleanText(code?.codingSchemeDesignator, 65);
    const meaning = cleanText(code?.codeMeaning, 257);
    // PS3.3 table 8.8-1: Code Value / Long Code Value up to 64, scheme designator SH (16),
    // meaning LO (64; longer meanings seen in the field are kept up to 256).
    if (!codeValue || codeValue.length > 64) issues.push({ message: 'procedureCode.codeValue must be 1 to 64 characters', location: 'procedureCode.codeValue' });
    if (scheme !== undefined && scheme.length > 16) issues.push({ message: 'procedureCode.codingSchemeDesignator must be at most 16 characters', location: 'procedureCode.codingSchemeDesignator' });
    if (meaning !== undefined && meaning.length > 256) issues.push({ message: 'procedureCode.codeMeaning must be at most 256 characters', location: 'procedureCode.codeMeaning' });
    if (codeValue) normalized.procedureCode = { codeValue, codingSchemeDesignator: scheme ?? null, codeMeaning: meaning ?? null };
  }
  if (issues.length > 0) throw new DomainError('invalid', issues.map((issue) => issue.message).join('; '), issues);
  return normalized;
}
