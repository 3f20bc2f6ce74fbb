/** A site's storage use as the data lifecycle job last computed it (src/domain/retention/storage-usage.ts). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readStorageUsage, storageUsageView } from '../../domain/retention/storage-usage.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const integer = { type: 'integer' } as const;

export const storageUsageSchema = {
  type: 'object',
  properties: {
    site_id: { type: 'string' },
    computed_at: { type: ['string', 'null'], format: 'date-time', description: 'when the figures were computed (hourly); null before the first run' },
    database_rows: integer,
    database_bytes: { ...integer, description: 'sum of pg_column_size of the rows: data as stored, without indexes' },
    dicom_instances: integer,
    dicom_bytes: { ...integer, description: 'sum of the stored instances\' sizes' },
    items: {
      type: 'array',
      items: { type: 'object', properties: { item: { type: 'string', description: 'a table, or dicom-files' }, rows: integer, bytes: integer } },
    },
  },
} as const;

export function registerSiteUsageRoute(app: FastifyInstance, services: Services): void {
  app.get(
    '/api/sites/:siteId/usage',
    {
      schema: {
        summary: 'The site\'s storage use: database rows and bytes per table, DICOM bytes (service admin, or the site\'s admin)',
        tags: ['sites'],
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        response: { 200: storageUsageSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { site } = await siteForArea(services.database, request, request.params.siteId, 'siteSettings');
      return storageUsageView(await readStorageUsage(services.database, site.id));
    },
  );
}
