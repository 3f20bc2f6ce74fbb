import type { FastifyError } from 'fastify';
import { DomainError, ServiceBusyError, type DomainErrorCode } from '../../domain/errors.ts';
import { StatementTimeoutError, TransientStorageError, isTransientDatabaseError } from '../../storage/errors.ts';
import { HttpProblem } from './http-problem.ts';

export interface MappedError {
  statusCode: number;
  code: string;
  message: string;
  details?: unknown;
  headers?: Record<string, string>;
  /** Unexpected: log it with its stack (never sent). */
  unexpected: boolean;
}

const domainStatus: Record<DomainErrorCode, number> = {
  invalid: 400,
  'not-found': 404,
  conflict: 409,
  'precondition-failed': 412,
  'business-rule': 422,
  unsupported: 400,
  'too-large': 413,
};

const fastifyCodes: Record<string, { statusCode: number; code: string; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'too-large', message: 'the request body is larger than this endpoint accepts' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { statusCode: 415, code: 'unsupported-media-type' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { statusCode: 400, code: 'invalid', message: 'the Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { statusCode: 400, code: 'invalid', message: 'the JSON body is empty' },
  FST_ERR_CTP_INVALID_JSON_BODY: { statusCode: 400, code: 'invalid', message: 'the body is not valid JSON' },
  FST_ERR_VALIDATION: { statusCode: 400, code: 'invalid' },
};

/** One place that decides status and code for everything a route can throw (STYLE.md: Errors). */
export function mapError(error: unknown): MappedError {
  if (error instanceof HttpProblem) {
    return { statusCode: error.statusCode, code: error.code, message: error.message, details: error.details, headers: error.headers, unexpected: false };
  }
  if (error instanceof DomainError) {
    return { statusCode: domainStatus[error.code], code: error.code, message: error.message, details: { issues: error.issues }, unexpected: false };
  }
  if (error instanceof ServiceBusyError) {
    return { statusCode: 503, code: 'busy', message: error.message, headers: { 'retry-after': String(error.retryAfterSeconds) }, unexpected: false };
  }
  if (error instanceof StatementTimeoutError) {
    // The request's own cost, not the service's health: a 4xx, so clients do not retry it as it is.
    return {
      statusCode: 400,
      code: 'too-costly',
      message: `the request needed more than ${error.timeoutMs / 1000} s of database time and was cancelled; narrow its criteria`,
      unexpected: false,
    };
  }
  if (error instanceof TransientStorageError || isTransientDatabaseError(error)) {
    return {
      statusCode: 503,
      code: 'unavailable',
      message: 'the service cannot reach its database right now; retry later',
      headers: { 'retry-after': '5' },
      unexpected: false,
    };
  }
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown[] };
  if (typeof fastifyError.code === 'string' && fastifyCodes[fastifyError.code]) {
    const known = fastifyCodes[fastifyError.code]!;
    return {
      statusCode: known.statusCode,
      code: known.code,
      message: known.message ?? fastifyError.message ?? 'invalid request',
      ...(fastifyError.validation ? { details: { validation: fastifyError.validation } } : {}),
      unexpected: false,
    };
  }
  const status = (error as { statusCode?: unknown } | undefined)?.statusCode;
  if (error instanceof SyntaxError && status === 400) {
    return { statusCode: 400, code: 'invalid', message: 'the body is not valid JSON', unexpected: false };
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { statusCode: status, code: 'invalid', message: fastifyError.message ?? 'invalid request', unexpected: false };
  }
  return { statusCode: 500, code: 'internal', message: 'an internal error occurred; quote the request id when reporting it', unexpected: true };
}
