/**
 * The MPPS intake body (issue 5 point 5), checked field by field so that every refusal names the
 * JSON field at fault. Unknown fields are refused too: a misspelt optional field ("stationAe")
 * silently dropped would lose data the sender believes was recorded.
 */
import { isAeTitle, isProcedureStepStatus, procedureStepStatuses, type ProcedureStepInput } from '../domain/imaging/procedure-step-input.ts';
import { isStrictDicomUid, maxUidLength } from '../domain/imaging/dicom-values.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import { parseDateTime } from './date-time.ts';

export const ingestFields = ['sop_instance_uid', 'study_uid', 'status', 'modality', 'station_ae_title', 'started_at', 'ended_at', 'procedure_code'] as const;
const procedureCodeFields = ['code_value', 'coding_scheme_designator', 'code_meaning'];

/** A 400 naming the field, rendered as {"error":{"code":"invalid","message","field"}}. */
export function invalidField(field: string, message: string): HttpProblem {
  return new HttpProblem(400, 'invalid', message, { details: { field } });
}

export function parseIngestBody(body: unknown): ProcedureStepInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpProblem(400, 'invalid', 'the body must be a JSON object');
  }
  const record = body as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!(ingestFields as readonly string[]).includes(key)) throw invalidField(key, `unknown field ${JSON.stringify(key).slice(0, 80)}`);
  }
  const input: ProcedureStepInput = {
    sopInstanceUid: requiredUid(record, 'sop_instance_uid'),
    studyInstanceUid: requiredUid(record, 'study_uid'),
    status: requiredStatus(record.status),
  };
  const modality = optionalString(record, 'modality');
  if (modality !== undefined) {
    // PS3.3 C.7.3.1.1.1: Modality is a CS code (upper case, digits, underscore; 16 characters).
    if (!/^[A-Za-z0-9_]{1,16}$/.test(modality)) throw invalidField('modality', 'modality must be a DICOM modality code such as CT or MR');
    input.modality = modality;
  }
  const station = optionalString(record, 'station_ae_title');
  if (station !== undefined) {
    if (!isAeTitle(station)) throw invalidField('station_ae_title', 'station_ae_title must be an AE title: 1 to 16 characters, no backslash or control characters');
    input.stationAeTitle = station;
  }
  const startedAt = optionalDateTime(record, 'started_at');
  if (startedAt) input.startedAt = startedAt;
  const endedAt = optionalDateTime(record, 'ended_at');
  if (endedAt) input.endedAt = endedAt;
  if (startedAt && endedAt && endedAt < startedAt) throw invalidField('ended_at', 'ended_at is before started_at');
  const code = record.procedure_code;
  if (code !== undefined && code !== null) input.procedureCode = parseProcedureCode(code);
  return input;
}

function requiredUid(record: Record<string, unknown>, field: string): string {
  const value = record[field];
  if (value === undefined || value === null) throw invalidField(field, `${field} is required`);
  if (typeof value !== 'string') throw invalidField(field, `${field} must be a string`);
  if (!isStrictDicomUid(value)) {
    throw invalidField(
      field,
      value.length > maxUidLength
        ? `${field} is longer than ${maxUidLength} characters`
        : `${field} is not a DICOM UID: digits and dots, no empty component, no leading zero (PS3.5 9.1)`,
    );
  }
  return value;
}

function requiredStatus(value: unknown): ProcedureStepInput['status'] {
  if (value === undefined || value === null) throw invalidField('status', 'status is required');
  if (!isProcedureStepStatus(value)) throw invalidField('status', `status must be one of ${procedureStepStatuses.join(', ')}`);
  return value;
}

function optionalString(record: Record<string, unknown>, field: string, maxLength = 256): string | undefined {
  const value = record[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidField(field, `${field} must be a string`);
  if (value.length > maxLength) throw invalidField(field, `${field} is longer than ${maxLength} characters`);
  return value;
}

function optionalDateTime(record: Record<string, unknown>, field: string): Date | undefined {
  const value = optionalString(record, field, 64);
  if (value === undefined) return undefined;
  const date = parseDateTime(value);
  if (!date) throw invalidField(field, `${field} must be an RFC 3339 date-time with an offset, such as 2026-01-02T10:20:00Z`);
  return date;
}

/** A code value alone, or the PS3.3 8.8 triplet. */
function parseProcedureCode(code: unknown): NonNullable<ProcedureStepInput['procedureCode']> {
  if (typeof code === 'string') {
    if (code.trim().length === 0 || code.length > 64) throw invalidField('procedure_code', 'procedure_code must be 1 to 64 characters');
    return { codeValue: code };
  }
  if (typeof code !== 'object' || Array.isArray(code)) throw invalidField('procedure_code', 'procedure_code must be a string or an object');
  const record = code as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!procedureCodeFields.includes(key)) throw invalidField(`procedure_code.${key}`, `unknown field ${JSON.stringify(key).slice(0, 80)} in procedure_code`);
  }
  const value = record.code_value;
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > 64) {
    throw invalidField('procedure_code.code_value', 'procedure_code.code_value must be 1 to 64 characters');
  }
  const result: NonNullable<ProcedureStepInput['procedureCode']> = { codeValue: value };
  const scheme = record.coding_scheme_designator;
  if (scheme !== undefined && scheme !== null) {
    if (typeof scheme !== 'string' || scheme.length > 16) throw invalidField('procedure_code.coding_scheme_designator', 'procedure_code.coding_scheme_designator must be at most 16 characters');
    result.codingSchemeDesignator = scheme;
  }
  const meaning = record.code_meaning;
  if (meaning !== undefined && meaning !== null) {
    if (typeof meaning !== 'string' || meaning.length > 256) throw invalidField('procedure_code.code_meaning', 'procedure_code.code_meaning must be at most 256 characters');
    result.codeMeaning = meaning;
  }
  return result;
}
