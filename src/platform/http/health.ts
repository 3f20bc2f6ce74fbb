import type { FastifyInstance } from 'fastify';
import type { Database } from '../../storage/database.ts';

const statusSchema = {
  type: 'object',
  properties: { status: { type: 'string' } },
  required: ['status'],
} as const;

/** Liveness and readiness, without credentials, on every origin (load balancers probe them). */
export function registerHealthRoutes(app: FastifyInstance, database: Database): void {
  app.get(
    '/healthz',
    { config: { public: true }, schema: { summary: 'The process is alive', tags: ['health'], security: [], response: { 200: statusSchema } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      config: { public: true },
      schema: { summary: 'The database is reachable', tags: ['health'], security: [], response: { 200: statusSchema, 503: statusSchema } },
    },
    async (_request, reply) => {
      const ready = await database.isReachable();
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not-ready' });
    },
  );
}
