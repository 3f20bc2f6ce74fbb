import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { apiKeyChallenge } from './api-key-auth.ts';
import type { HttpSurface } from './surface.ts';

/**
 * OpenAPI 3 generated from the route schemas that also validate requests, so the document cannot
 * drift from what the origin accepts; Swagger UI's assets come from the installed package.
 * Must be registered before the surface's routes so that it sees them.
 */
export async function registerDocumentation(app: FastifyInstance, surface: HttpSurface, enabled: boolean): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: surface.title, description: surface.description, version: '1' },
      components:
        surface.auth === 'api-key'
          ? {
              securitySchemes: {
                apiKey: {
                  type: 'apiKey',
                  in: 'header',
                  name: 'X-API-Key',
                  description: `A key of one site. Without a valid key the answer is 401 with WWW-Authenticate: ${apiKeyChallenge}`,
                },
                ...(surface.alsoAccepts ? { [surface.alsoAccepts.name]: surface.alsoAccepts.scheme } : {}),
              },
            }
          : {
              securitySchemes: {
                session: { type: 'apiKey', in: 'cookie', name: 'cg_session', description: 'A signed-in user; state-changing requests also send X-CSRF-Token' },
                automationToken: {
                  type: 'http',
                  scheme: 'bearer',
                  description: 'A service administrator\'s automation token (cgat_...), for scripts: no cookie and no CSRF token; a request with both a bearer token and a session cookie is refused (400)',
                },
              },
            },
      security: surface.auth === 'api-key' ? [{ apiKey: [] }] : [{ session: [] }, { automationToken: [] }],
    },
    // Documentation and health routes describe the origin, not its API.
    transform: ({ schema, url, route }) => {
      if (url.startsWith('/api/documentation')) return { schema: { ...schema, hide: true } as typeof schema, url };
      return { schema: withAlsoAccepted(surface, schema, route.method), url };
    },
  });
  if (!enabled) return;
  await app.register(swaggerUi, {
    routePrefix: '/api/documentation',
    uiConfig: { docExpansion: 'list', deepLinking: false },
    staticCSP: true,
  });
  app.get('/api/documentation/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
}

/**
 * Each operation's security when the origin accepts another credential for some methods: either
 * credential where it is accepted, the origin's own elsewhere. Routes that declare their own
 * security (public ones: `security: []`) keep it.
 */
function withAlsoAccepted<S extends object>(surface: HttpSurface, schema: S, method: string | string[]): S {
  const also = surface.alsoAccepts;
  if (!also || surface.auth !== 'api-key' || (schema as { security?: unknown }).security !== undefined) return schema;
  const covered = [method].flat().every((one) => also.covers(one));
  return { ...schema, security: covered ? [{ apiKey: [] }, { [also.name]: [] }] : [{ apiKey: [] }] };
}
