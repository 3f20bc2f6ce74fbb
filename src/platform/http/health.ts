import type { FastifyInstance } from 'fastify';
import type { Database } from '../../storage/database.ts';
import { workerNumber } from '../worker.ts';

const statusSchema = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    node: { type: 'string', description: 'the node that answered (CG_NODE_ID or its generated id)' },
    worker: { type: 'integer', description: 'the worker process that answered, when the service runs several' },
  },
  required: ['status'],
} as const;

/** Liveness and readiness, without credentials, on every origin (load balancers probe them). */
export function registerHealthRoutes(app: FastifyInstance, database: Database, nodeId: string | undefined): void {
  // A load balancer's probes land on any node and worker; the body says which (operators, tests).
  const worker = workerNumber();
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
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not-ready', ...(nodeId !== undefined ? { node: nodeId } : {}), ...(worker !== undefined ? { worker } : {}) });
    },
  );
}
