import type { FastifyInstance } from 'fastify';
import type { Database } from '../../storage/database.ts';
import type { DiskSpaceGuard } from '../disk-space/disk-space-guard.ts';
import { workerNumber } from '../worker.ts';

const statusSchema = {
  type: 'object',
  properties: {
    status: { type: 'string', description: 'ready, degraded (ready for reads; new data refused: see reason) or not-ready' },
    reason: { type: 'string', description: 'why the node is degraded' },
    disk: {
      type: 'object',
      description: 'the free space of the fullest folder below the floor (the log names the folder: this answer is public)',
      properties: { free_bytes: { type: 'integer' }, floor_bytes: { type: 'integer' } },
    },
    node: { type: 'string', description: 'the node that answered (CG_NODE_ID or its generated id)' },
    worker: { type: 'integer', description: 'the worker process that answered, when the service runs several' },
  },
  required: ['status'],
} as const;

/** Liveness and readiness, without credentials, on every origin (load balancers probe them). */
/**
 * /readyz answers 200 "degraded" below the free-space floor, not 503: the node still serves every
 * read, and a full disk is usually the shared DICOM storage or database of every node, so a load
 * balancer draining on it would take the reads of the whole fleet down for nothing; each write
 * surface refuses with its own retry-later answer meanwhile (docs/data-lifecycle.md#disk-safety).
 */
export function registerHealthRoutes(app: FastifyInstance, database: Database, nodeId: string | undefined, diskSpace?: DiskSpaceGuard): void {
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
      schema: { summary: 'The database is reachable (200 ready, or degraded: reads only, new data refused for disk space)', tags: ['health'], security: [], response: { 200: statusSchema, 503: statusSchema } },
    },
    async (_request, reply) => {
      const ready = await database.isReachable();
      const low = ready ? diskSpace?.shortage() : undefined;
      const state = low
        ? {
            status: 'degraded',
            reason: 'free disk space below the floor: new data is refused (retry later); reads are served',
            disk: { free_bytes: low.freeBytes, floor_bytes: low.floorBytes },
          }
        : { status: ready ? 'ready' : 'not-ready' };
      return reply.code(ready ? 200 : 503).send({ ...state, ...(nodeId !== undefined ? { node: nodeId } : {}), ...(worker !== undefined ? { worker } : {}) });
    },
  );
}
