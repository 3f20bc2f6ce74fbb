/**
 * Service-administrator automation tokens (the service administrators' area): list (never the
 * secret), create (the token is returned once), revoke. Managed by a signed-in service admin
 * only: a token cannot mint or revoke tokens, so a leaked one cannot make itself a successor.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createAutomationToken, listAutomationTokens, parseExpiry, revokeAutomationToken, type AutomationToken } from '../../domain/keys/automation-tokens.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf } from '../access.ts';
import { sessionOf } from '../session/authenticate.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const tags = ['automation tokens'];
/** A token cannot manage tokens: these routes take only a signed-in service admin's session. */
const security = [{ session: [] }];
const time = { type: ['string', 'null'], format: 'date-time' } as const;
const tokenSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, prefix: { type: 'string' }, label: { type: 'string' }, created_at: { type: 'string', format: 'date-time' }, expires_at: time, last_used_at: time, revoked_at: time },
} as const;

function tokenView(token: AutomationToken) {
  return { id: token.id, prefix: token.prefix, label: token.label, created_at: token.createdAt, expires_at: token.expiresAt, last_used_at: token.lastUsedAt, revoked_at: token.revokedAt };
}

function requireSignedInServiceAdmin(request: FastifyRequest): void {
  const session = sessionOf(request);
  if (session.automationToken) throw new HttpProblem(403, 'forbidden', 'automation tokens are managed by a signed-in service admin or with the CLI, not with a token');
  if (session.user.role !== 'service-admin') throw new HttpProblem(403, 'forbidden', 'only a service admin manages automation tokens');
}

export async function registerAutomationTokenRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/automation-tokens',
    { schema: { summary: 'Automation tokens (prefix only)', tags, security, response: { 200: { type: 'object', properties: { tokens: { type: 'array', items: tokenSchema } } }, ...errorResponses } } },
    async (request) => {
      requireSignedInServiceAdmin(request);
      return { tokens: (await listAutomationTokens(database)).map(tokenView) };
    },
  );

  app.post(
    '/api/automation-tokens',
    {
      schema: {
        summary: 'Create an automation token',
        security,
        description: 'The response carries the token; it is stored only as a hash and is never shown again. Send it as Authorization: Bearer <token>.',
        tags,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            label: { type: 'string', maxLength: 200 },
            expires_at: { type: ['string', 'null'], maxLength: 40, description: 'ISO 8601 time or a number of days ("90d"); omit or null for no expiry' },
          },
        },
        response: { 201: { type: 'object', properties: { automation_token: tokenSchema, token: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Body: { label?: string; expires_at?: string | null } }>, reply) => {
      requireSignedInServiceAdmin(request);
      const { label, expires_at: expiry } = request.body ?? {};
      const expiresAt = expiry ? parseExpiry(expiry) : null;
      const { token, secret } = await database.transaction((tx) => createAutomationToken(tx, { ...(label !== undefined ? { label } : {}), expiresAt }, actorOf(request)));
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ automation_token: tokenView(token), token: secret });
    },
  );

  app.post(
    '/api/automation-tokens/:tokenId/revoke',
    {
      schema: {
        summary: 'Revoke an automation token (effective at once on every node)',
        security,
        tags,
        params: { type: 'object', required: ['tokenId'], properties: { tokenId: uuidParam } },
        response: { 200: tokenSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { tokenId: string } }>) => {
      requireSignedInServiceAdmin(request);
      return tokenView(await database.transaction((tx) => revokeAutomationToken(tx, request.params.tokenId, actorOf(request))));
    },
  );
}
