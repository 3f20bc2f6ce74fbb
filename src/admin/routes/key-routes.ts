/** A site's API keys: list (never the key itself), create (the key is returned once), revoke. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createApiKey, listApiKeys, revokeApiKey } from '../../domain/keys/api-keys.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf, siteForArea } from '../access.ts';
import { apiKeySchema, errorResponses, uuidParam } from './schemas.ts';
import { apiKeyView } from './views.ts';

const tags = ['api keys'];
const siteParams = { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } } as const;

export async function registerKeyRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/keys',
    { schema: { summary: 'The site\'s API keys (prefix only)', tags, params: siteParams, response: { 200: { type: 'object', properties: { keys: { type: 'array', items: apiKeySchema } } }, ...errorResponses } } },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'keys');
      return { keys: (await listApiKeys(database, site.id)).map(apiKeyView) };
    },
  );

  app.post(
    '/api/sites/:siteId/keys',
    {
      schema: {
        summary: 'Create an API key',
        description: 'The response carries the key; it is stored only as a hash and is never shown again.',
        tags,
        params: siteParams,
        body: {
          type: 'object',
          required: ['user_id'],
          additionalProperties: false,
          properties: { user_id: { type: 'string', maxLength: 64, description: 'the owner: an active user of the site' }, label: { type: 'string', maxLength: 200 } },
        },
        response: { 201: { type: 'object', properties: { api_key: apiKeySchema, key: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Body: { user_id: string; label?: string } }>, reply) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'keys');
      const { apiKey, key } = await database.transaction((tx) =>
        createApiKey(tx, { siteId: site.id, userId: request.body.user_id, ...(request.body.label !== undefined ? { label: request.body.label } : {}) }, actorOf(request)),
      );
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ api_key: apiKeyView(apiKey), key });
    },
  );

  app.post(
    '/api/sites/:siteId/keys/:keyId/revoke',
    {
      schema: {
        summary: 'Revoke an API key (effective on its next request)',
        tags,
        params: { type: 'object', required: ['siteId', 'keyId'], properties: { siteId: uuidParam, keyId: uuidParam } },
        response: { 200: apiKeySchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; keyId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'keys');
      const revoked = await database.transaction((tx) => revokeApiKey(tx, request.params.keyId, actorOf(request), { siteId: site.id }));
      return apiKeyView(revoked);
    },
  );
}
