/**
 * The MPPS origin's error format: {"error":{"code","message","field"}} (issue 5 point 5), with
 * "field" naming the JSON field at fault whichever layer refused it (body parser, schema, domain).
 */
import { renderJsonError, type HttpErrorInfo, type RenderedError } from '../platform/http/surface.ts';

// Domain issue locations (camelCase, domain terms) to the intake's JSON field names.
const domainFields: Record<string, string> = {
  sopInstanceUid: 'sop_instance_uid',
  studyInstanceUid: 'study_uid',
  status: 'status',
  modality: 'modality',
  stationAeTitle: 'station_ae_title',
  startedAt: 'started_at',
  endedAt: 'ended_at',
  'procedureCode.codeValue': 'procedure_code.code_value',
  'procedureCode.codingSchemeDesignator': 'procedure_code.coding_scheme_designator',
  'procedureCode.codeMeaning': 'procedure_code.code_meaning',
};

export function renderMppsError(error: HttpErrorInfo): RenderedError {
  const field = fieldOf(error.details);
  return renderJsonError({ ...error, details: field ? { field } : undefined });
}

function fieldOf(details: unknown): string | undefined {
  if (!details || typeof details !== 'object') return undefined;
  const d = details as { field?: unknown; issues?: { location?: string }[]; validation?: { instancePath?: string; params?: { missingProperty?: string } }[] };
  if (typeof d.field === 'string') return d.field;
  const location = d.issues?.find((issue) => issue.location)?.location;
  if (location) return domainFields[location] ?? location;
  const first = d.validation?.[0];
  if (first) {
    const path = (first.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    const missing = first.params?.missingProperty;
    return [path, missing].filter(Boolean).join('.') || undefined;
  }
  return undefined;
}
