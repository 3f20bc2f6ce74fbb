/** Who did what and when: the audit log of one site, or of the whole service (service admin). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditEvent } from '../../domain/audit/audit.ts';
import { listAudit } from '../../domain/audit/audit.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import type { Queryable } from '../../storage/database.ts';
import { siteForArea } from '../access.ts';
import { sessionOf } from '../session/authenticate.ts';
import { auditEventSchema, errorResponses, uuidParam } from './schemas.ts';

const tags = ['audit'];
const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 }, before: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'next_before of the previous page' } },
} as const;
const pageResponse = { type: 'object', properties: { events: { type: 'array', items: auditEventSchema }, next_before: { type: 'string' } } } as const;

/** Actors are recorded as "user:<id>"; show the person's e-mail beside it. */
async function withEmails(db: Queryable, events: AuditEvent[], limit: number) {
  const ids = [...new Set(events.map((e) => /^user:([0-9a-f-]{36})$/.exec(e.actor)?.[1]).filter((id): id is string => id !== undefined))];
  const { rows } = ids.length > 0 ? await db.query<{ id: string; email: string }>('SELECT id, email FROM app_user WHERE id = ANY ($1::uuid[])', [ids]) : { rows: [] };
  const emails = new Map(rows.map((row) => [row.id, row.email]));
  return {
    events: events.map((e) => ({
      id: e.id,
      occurred_at: e.occurredAt,
      site_id: e.siteId,
      actor: e.actor,
      actor_email: emails.get(e.actor.slice('user:'.length)) ?? null,
      action: e.action,
      target_type: e.targetType,
      target_id: e.targetId,
      details: e.details,
    })),
    ...(events.length === limit ? { next_before: events[events.length - 1]!.id } : {}),
  };
}

export async function registerAuditRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/audit',
    { schema: { summary: 'The site\'s audit log, newest first', tags, params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } }, querystring: pageQuery, response: { 200: pageResponse, ...errorResponses } } },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: { limit?: number; before?: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'audit');
      const limit = request.query.limit ?? 50;
      return withEmails(database, await listAudit(database, { siteId: site.id, limit, ...(request.query.before ? { beforeId: request.query.before } : {}) }), limit);
    },
  );

  app.get(
    '/api/audit',
    { schema: { summary: 'The whole service\'s audit log (service admin)', tags, querystring: pageQuery, response: { 200: pageResponse, ...errorResponses } } },
    async (request: FastifyRequest<{ Querystring: { limit?: number; before?: string } }>) => {
      if (sessionOf(request).user.role !== 'service-admin') throw new HttpProblem(403, 'forbidden', 'only a service admin sees the whole service\'s audit log');
      const limit = request.query.limit ?? 50;
      return withEmails(database, await listAudit(database, { limit, ...(request.query.before ? { beforeId: request.query.before } : {}) }), limit);
    },
  );
}
