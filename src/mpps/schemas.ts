/** OpenAPI descriptions of the MPPS intake (the platform builds the document from these). */
import { procedureStepStatuses } from '../domain/imaging/procedure-step-input.ts';

const uid = { type: 'string', maxLength: 64, pattern: '^(0|[1-9][0-9]*)(\\.(0|[1-9][0-9]*))*$' } as const;
const dateTime = { type: 'string', format: 'date-time', description: 'RFC 3339 with an offset, e.g. 2026-01-02T10:20:00Z' } as const;

const procedureCodeObject = {
  type: 'object',
  additionalProperties: false,
  required: ['code_value'],
  properties: {
    code_value: { type: 'string', minLength: 1, maxLength: 64 },
    coding_scheme_designator: { type: 'string', maxLength: 16 },
    code_meaning: { type: 'string', maxLength: 256 },
  },
} as const;

export const ingestBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sop_instance_uid', 'study_uid', 'status'],
  properties: {
    sop_instance_uid: { ...uid, description: 'SOP Instance UID of the performed procedure step: its key' },
    study_uid: { ...uid, description: 'Study Instance UID the step belongs to (images may arrive before or after)' },
    status: { type: 'string', enum: [...procedureStepStatuses] },
    modality: { type: 'string', maxLength: 16, description: 'DICOM modality code (CT, MR, US, …)' },
    station_ae_title: { type: 'string', minLength: 1, maxLength: 16 },
    started_at: dateTime,
    ended_at: dateTime,
    procedure_code: {
      description: 'A code value, or a code with its scheme and meaning',
      anyOf: [{ type: 'string', minLength: 1, maxLength: 64 }, procedureCodeObject],
    },
  },
} as const;

export const stepResponseSchema = {
  type: 'object',
  properties: {
    sop_instance_uid: { type: 'string' },
    study_uid: { type: 'string' },
    status: { type: 'string', enum: [...procedureStepStatuses] },
    modality: { type: 'string', nullable: true },
    station_ae_title: { type: 'string', nullable: true },
    started_at: { type: 'string', nullable: true, format: 'date-time' },
    ended_at: { type: 'string', nullable: true, format: 'date-time' },
    procedure_code: { type: 'object', nullable: true, properties: procedureCodeObject.properties },
    study_indexed: { type: 'boolean', description: 'whether images of the study have arrived yet' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer' },
  },
} as const;

export const errorResponseSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        field: { type: 'string', description: 'the JSON field at fault' },
        request_id: { type: 'string' },
      },
    },
  },
} as const;
