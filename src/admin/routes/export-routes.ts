/** A site's FHIR Bulk Data exports: the list (state, times, counts, who) and cancel. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { removeJobFiles } from '../../domain/bulk-export/export-files.ts';
import { cancelExport } from '../../domain/bulk-export/cancel-export.ts';
import { listExports, type ExportListEntry } from '../../domain/bulk-export/export-jobs.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf, siteForArea } from '../access.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const tags = ['exports'];
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

const exportSchema = {
  type: 'object',
  properties: {
    id: str,
    level: str,
    resource_types: { type: 'array', items: str },
    since: nullableTime,
    state: str,
    expired: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    started_at: nullableTime,
    finished_at: nullableTime,
    expires_at: nullableTime,
    attempts: { type: 'integer' },
    resource_count: { type: 'integer' },
    files: { type: 'integer' },
    counts: { type: 'object', additionalProperties: { type: 'integer' } },
    requested_by: nullableStr,
    requested_by_key: nullableStr,
    requested_from: nullableStr,
    error: nullableStr,
  },
} as const;

function exportView(job: ExportListEntry) {
  const counts: Record<string, number> = {};
  for (const file of job.output) counts[file.type] = (counts[file.type] ?? 0) + file.count;
  return {
    id: job.id,
    level: job.level,
    resource_types: job.resourceTypes,
    since: job.since?.toISOString() ?? null,
    state: job.state,
    expired: job.expiresAt !== null && job.expiresAt.getTime() <= Date.now(),
    created_at: job.createdAt.toISOString(),
    started_at: job.startedAt?.toISOString() ?? null,
    finished_at: job.finishedAt?.toISOString() ?? null,
    expires_at: job.expiresAt?.toISOString() ?? null,
    attempts: job.attempts,
    resource_count: job.progressCount,
    files: job.output.length,
    counts,
    requested_by: job.requestedByEmail ?? job.requestedByUser,
    requested_by_key: job.requestedByKey,
    requested_from: job.requestedFrom,
    error: job.error,
  };
}

export async function registerExportRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  const siteParams = { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } } as const;
  app.get(
    '/api/sites/:siteId/exports',
    {
      schema: {
        summary: "The site's FHIR Bulk Data exports, newest first (the last 100)",
        tags,
        params: siteParams,
        response: { 200: { type: 'object', properties: { exports: { type: 'array', items: exportSchema }, retention_hours: { type: 'integer' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'exports');
      return { exports: (await listExports(database, site.id)).map(exportView), retention_hours: site.exportRetentionHours ?? services.config.bulkExport.retentionHours };
    },
  );
  app.post(
    '/api/sites/:siteId/exports/:exportId/cancel',
    {
      schema: {
        summary: 'Cancel an export (or delete a finished one) with its files',
        tags,
        params: { type: 'object', required: ['siteId', 'exportId'], properties: { siteId: uuidParam, exportId: uuidParam } },
        response: { 200: { type: 'object', properties: { deleted: { type: 'boolean' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; exportId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'exports');
      await database.transaction((tx) => cancelExport(tx, site.id, request.params.exportId, actorOf(request)));
      await removeJobFiles(services.config.bulkExport.dir, site.id, request.params.exportId);
      return { deleted: true };
    },
  );
}
