/**
 * Refused traffic (src/domain/refused-traffic): a site's operators see what was refused on the
 * site's behalf; service administrators see every entry, including those of no known site.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listRefusedTraffic, maxRefusedPage, refusedEntryJson, refusedSurfaces, type RefusedSurface } from '../../domain/refused-traffic/refused-traffic.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { sessionOf } from '../session/authenticate.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const tags = ['refused traffic'];
const str = { type: 'string' } as const;
const entrySchema = {
  type: 'object',
  properties: {
    id: str,
    site_id: { type: ['string', 'null'] },
    surface: str,
    kind: str,
    remote_address: str,
    reason: str,
    details: { type: 'object', additionalProperties: str },
    occurred_at: { type: 'string', format: 'date-time' },
    suppressed: { type: 'integer', description: 'further events of the same site, kind and address in that minute, counted here' },
    last_at: { type: 'string', format: 'date-time' },
  },
} as const;
const pageSchema = { type: 'object', properties: { entries: { type: 'array', items: entrySchema }, next_before: str } } as const;
const paging = {
  limit: { type: 'integer', minimum: 1, maximum: maxRefusedPage, default: 50 },
  before: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'next_before of the previous page' },
  surface: { type: 'string', enum: [...refusedSurfaces] },
} as const;

interface Paging {
  limit?: number;
  before?: string;
  surface?: RefusedSurface;
}

function pageOf(query: Paging) {
  return { limit: query.limit ?? 50, ...(query.before ? { before: query.before } : {}), ...(query.surface ? { surface: query.surface } : {}) };
}

export async function registerRefusedTrafficRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/refused-traffic',
    {
      schema: {
        summary: 'Traffic refused on the site\'s behalf (MLLP senders, DICOM associations, API keys), newest first',
        tags,
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        querystring: { type: 'object', additionalProperties: false, properties: paging },
        response: { 200: pageSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: Paging }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const page = await listRefusedTraffic(database, { siteId: context.siteId, ...pageOf(request.query) });
      return { entries: page.entries.map(refusedEntryJson), ...(page.nextBefore ? { next_before: page.nextBefore } : {}) };
    },
  );

  app.get(
    '/api/refused-traffic',
    {
      schema: {
        summary: 'Every refused connection, association and request (service administrators)',
        tags,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { ...paging, scope: { type: 'string', enum: ['all', 'no-site'], default: 'all', description: 'no-site: only those of no known site' } },
        },
        response: { 200: pageSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Querystring: Paging & { scope?: 'all' | 'no-site' } }>) => {
      if (sessionOf(request).user.role !== 'service-admin') throw new HttpProblem(403, 'forbidden', 'only a service admin sees the refused traffic of every site');
      const page = await listRefusedTraffic(database, { ...(request.query.scope === 'no-site' ? { siteId: null } : {}), ...pageOf(request.query) });
      return { entries: page.entries.map(refusedEntryJson), ...(page.nextBefore ? { next_before: page.nextBefore } : {}) };
    },
  );
}
