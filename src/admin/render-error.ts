/**
 * The admin origin's JSON error: { error: { code, message, fields?, request_id? } }. `fields`
 * names the form fields at fault (in the API's snake_case spelling) so that the web app can show
 * each message next to its field.
 */
import type { HttpErrorInfo, RenderedError } from '../platform/http/surface.ts';

// Domain locations that the API spells differently.
const fieldNames: Record<string, string> = {
  user: 'user_id',
  studyInstanceUid: 'study_instance_uid',
  authorUserId: 'author_user_id',
  defaultCharset: 'default_charset',
  stepStatus: 'step_status',
  reportStatus: 'report_status',
};

export interface FieldProblem {
  field: string;
  message: string;
}

export function fieldProblems(details: unknown): FieldProblem[] {
  const value = details as { issues?: { message: string; location?: string }[]; validation?: { instancePath?: string; message?: string; params?: Record<string, unknown> }[] } | undefined;
  const problems: FieldProblem[] = [];
  for (const issue of value?.issues ?? []) {
    if (issue.location) problems.push({ field: fieldNames[issue.location] ?? issue.location, message: issue.message });
  }
  for (const item of value?.validation ?? []) {
    const missing = item.params?.missingProperty;
    const extra = item.params?.additionalProperty;
    const path = (item.instancePath ?? '').replace(/^\//, '').split('/')[0] ?? '';
    if (typeof missing === 'string') problems.push({ field: missing, message: 'this field is required' });
    else if (typeof extra === 'string') problems.push({ field: extra, message: 'this field is not recognised' });
    else if (path) problems.push({ field: path, message: item.message ?? 'invalid value' });
  }
  // One message per field: the first is the most specific.
  const seen = new Set<string>();
  return problems.filter((p) => (seen.has(p.field) ? false : (seen.add(p.field), true)));
}

export function renderAdminError(error: HttpErrorInfo): RenderedError {
  const fields = fieldProblems(error.details);
  return {
    contentType: 'application/json; charset=utf-8',
    body: {
      error: {
        code: error.code,
        message: error.message,
        ...(fields.length > 0 ? { fields } : {}),
        ...(error.statusCode >= 500 ? { request_id: error.requestId } : {}),
      },
    },
  };
}
