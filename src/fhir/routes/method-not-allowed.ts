import type { FastifyInstance, HTTPMethods } from 'fastify';
import { HttpProblem } from '../../platform/http/http-problem.ts';

const answeredMethods: HTTPMethods[] = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/**
 * Any method a known path does not serve is a 405 OperationOutcome with an Allow header
 * (RFC 9110 section 15.5.6), not a 404: DELETE, PATCH, and writes to the read-only view.
 */
export function registerMethodNotAllowed(app: FastifyInstance, url: string, allowed: HTTPMethods[], tag: string): void {
  const methods = answeredMethods.filter((method) => !allowed.includes(method));
  if (methods.length === 0) return;
  const allow = [...allowed, ...(allowed.includes('GET') ? ['HEAD'] : [])].join(', ');
  app.route({
    method: methods,
    url,
    schema: { hide: true, tags: [tag] },
    validatorCompiler: () => () => true,
    // Answered before the body is read: whatever its type or size, the method is the problem.
    onRequest: async (request) => {
      throw new HttpProblem(405, 'method-not-allowed', `${request.method} is not allowed on ${url.replace(':id', '{id}').replace(':vid', '{vid}')}; allowed: ${allow}`, {
        headers: { allow },
      });
    },
    handler: async () => undefined,
  });
}
