/** The site's data access log: who read which patient's data (issue 26 point 14). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { dataAccessJson, listDataAccess, maxDataAccessPage, resolveAccessActors } from '../../domain/audit/data-access-log.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const tags = ['audit'];
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const strings = { type: 'array', items: str } as const;

export const dataAccessSchema = {
  type: 'object',
  properties: {
    id: str,
    occurred_at: { type: 'string', format: 'date-time' },
    user_id: nullableStr,
    user_email: nullableStr,
    key_id: nullableStr,
    key_prefix: nullableStr,
    remote_address: nullableStr,
    surface: str,
    interaction: str,
    resource_type: str,
    query: nullableStr,
    resource_ids: strings,
    resource_count: { type: 'integer' },
    patient_ids: strings,
  },
} as const;

interface DataAccessQuery {
  patient?: string;
  user?: string;
  key?: string;
  since?: string;
  until?: string;
  limit?: number;
  before?: string;
}

export async function registerDataAccessRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  app.get(
    '/api/sites/:siteId/data-access',
    {
      schema: {
        summary: 'Who read the site\'s clinical data, newest first',
        description: 'Every FHIR read, vread, history and search and every clinical view of this app, filtered by patient, user, API key and time.',
        tags,
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            patient: { type: 'string', maxLength: 128, description: 'the FHIR Patient id' },
            user: { type: 'string', maxLength: 320, description: 'a user id or e-mail of the site' },
            key: { type: 'string', maxLength: 100, description: 'an API key id or prefix (cg_…) of the site' },
            since: { type: 'string', format: 'date-time', description: 'from this instant, inclusive' },
            until: { type: 'string', format: 'date-time', description: 'before this instant' },
            limit: { type: 'integer', minimum: 1, maximum: maxDataAccessPage, default: 50 },
            before: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'next_before of the previous page' },
          },
        },
        response: { 200: { type: 'object', properties: { entries: { type: 'array', items: dataAccessSchema }, next_before: str } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: DataAccessQuery }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'audit');
      const q = request.query;
      const actors = await resolveAccessActors(database, site.id, { ...(q.user ? { user: q.user } : {}), ...(q.key ? { key: q.key } : {}) });
      const page = await listDataAccess(database, site.id, {
        ...actors,
        ...(q.patient ? { patientId: q.patient } : {}),
        ...(q.since ? { since: new Date(q.since) } : {}),
        ...(q.until ? { until: new Date(q.until) } : {}),
        limit: q.limit ?? 50,
        ...(q.before ? { beforeId: q.before } : {}),
      });
      return { entries: page.entries.map(dataAccessJson), ...(page.nextBefore ? { next_before: page.nextBefore } : {}) };
    },
  );
}
