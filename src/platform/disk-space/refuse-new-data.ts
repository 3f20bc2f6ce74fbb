import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/http-problem.ts';
import type { Services } from '../services.ts';

/**
 * While free disk space is below the floor, answers the requests `isNewData` picks with 503 and
 * Retry-After in the origin's own error format, before the body is read; every other request,
 * reads above all, goes on. Registered after authentication, so an unauthenticated caller still
 * gets its 401 and learns nothing of the node's state.
 */
export function refuseNewDataWhileDiskLow(app: FastifyInstance, services: Services, isNewData: (request: FastifyRequest) => boolean): void {
  const guard = services.diskSpace;
  if (!guard) return;
  app.addHook('onRequest', async (request) => {
    const refusal = guard.refusal();
    if (!refusal || !isNewData(request)) return;
    throw new HttpProblem(503, 'unavailable', refusal.message, { headers: { 'retry-after': String(refusal.retryAfterSeconds) } });
  });
}

/** Any method that is not a read. */
export function isWriteMethod(request: FastifyRequest): boolean {
  return request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'OPTIONS';
}
