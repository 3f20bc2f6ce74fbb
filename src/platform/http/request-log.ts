import type { FastifyBaseLogger, FastifyRequest } from 'fastify';

/**
 * A logger bound to the request's id, for handlers whose work logs several lines (message
 * intake). Origins make no child logger per request (see createOrigin): most requests log one
 * line, which carries the id itself.
 */
export function requestLog(request: FastifyRequest): FastifyBaseLogger {
  return request.log.child({ reqId: request.id });
}
