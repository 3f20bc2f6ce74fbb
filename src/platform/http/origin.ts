import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { describeActor } from '../../domain/site-context.ts';
import type { Services } from '../services.ts';
import { installApiKeyAuthentication } from './api-key-auth.ts';
import { registerDocumentation } from './documentation.ts';
import { mapError } from './error-mapping.ts';
import { registerHealthRoutes } from './health.ts';
import { clientErrorHandler, frameworkErrorHandler } from './malformed-request.ts';
import type { HttpSurface } from './surface.ts';
import { discardUnreadBody } from './unread-body.ts';
import { acceptProxyProtocol, TrustedProxies } from '../proxy/proxied-connections.ts';
import './site-context.ts';

export const defaultBodyLimit = 1024 * 1024;

/**
 * One HTTP origin: a Fastify instance that serves exactly one surface's routes (a path of another
 * surface is a 404 here), with the platform's authentication, documentation, health and error
 * rendering around them. Not yet listening.
 */
export async function createOrigin(surface: HttpSurface, services: Services): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    loggerInstance: services.logger.child({ surface: surface.name }),
    genReqId: () => randomUUID(),
    // One line per request (written in onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request (its bindings are serialised for every request): the request id
    // is written on the request's lines explicitly.
    childLoggerFactory: (logger: FastifyBaseLogger) => logger,
    bodyLimit: defaultBodyLimit,
    // Slow clients must not hold sockets for ever (slowloris): whole request in 30 s, headers in 10 s.
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // X-Forwarded-For (and -Proto, -Host) are believed only from the load balancers (proxy-addr:
    // the client is the nearest address in the chain that is not one of them).
    ...(config.trustedProxies.length > 0 ? { trustProxy: config.trustedProxies } : {}),
    ...(config.tls ? { https: { cert: config.tls.cert, key: config.tls.key } } : {}),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: true } },
    frameworkErrors: frameworkErrorHandler((request, reply, error) => sendRendered(surface, request, reply, error)),
    clientErrorHandler: clientErrorHandler(surface),
  } as Parameters<typeof Fastify>[0]) as unknown as FastifyInstance;
  app.server.headersTimeout = 10_000;
  if (!config.tls) acceptProxyProtocol(app.server, new TrustedProxies(config.trustedProxies), services.logger.child({ surface: surface.name }));

  app.decorateRequest('siteContext', null);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // A refusal made before the body was read (too large, no valid key) waits for the rest of the
  // body, so that the client is still listening when the answer comes; past the bound, it is sent
  // at once and the connection closed.
  // (A callback hook: nearly every request is complete, and this path should not cost a promise.)
  app.addHook('onSend', (request, reply, _payload, done) => {
    if (request.raw.complete) return done();
    void discardUnreadBody(request.raw).then((complete) => {
      if (!complete) reply.header('connection', 'close');
      done();
    });
  });
  // The caller's site and credential go on this line rather than into a child logger made per
  // request: a pino child per request cost a tenth of the service's CPU under load.
  app.addHook('onResponse', async (request, reply) => {
    services.metrics?.httpRequest(surface.name, request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    const site = request.siteContext;
    if (site?.actor.kind === 'api-key' && surface.name !== 'admin' && surface.name !== 'connectivity') services.traffic?.count({ siteId: site.siteId, senderKind: 'api-key', sender: site.actor.keyId, surface: surface.name, measure: 'request', ok: reply.statusCode < 400 });
    request.log.info(
      {
        reqId: request.id,
        method: request.method,
        path: request.url.split('?')[0],
        statusCode: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...(site ? { siteId: site.siteId, actor: describeActor(site.actor) } : {}),
      },
      'request completed',
    );
  });

  app.setErrorHandler(async (error, request, reply) => sendError(surface, error, request, reply));
  app.setNotFoundHandler(async (request, reply) =>
    sendRendered(surface, request, reply, { statusCode: 404, code: 'not-found', message: `no route ${request.method} ${request.url.split('?')[0]} on this origin` }),
  );

  await registerDocumentation(app, surface, config.docs);
  registerHealthRoutes(app, services.database, services.config.nodeId, services.diskSpace);
  await surface.registerBeforeAuthentication?.(app, services);
  if (surface.auth === 'api-key') installApiKeyAuthentication(app, services.database, surface.name);
  await surface.register(app, services);
  await app.ready();
  return app;
}

function sendError(surface: HttpSurface, error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = mapError(error);
  if (mapped.unexpected) request.log.error({ err: error, reqId: request.id }, 'unexpected error');
  else if (mapped.statusCode === 503) request.log.warn({ err: error, reqId: request.id }, 'database unavailable');
  for (const [name, value] of Object.entries(mapped.headers ?? {})) reply.header(name, value);
  return sendRendered(surface, request, reply, mapped);
}

function sendRendered(
  surface: HttpSurface,
  request: FastifyRequest,
  reply: FastifyReply,
  error: { statusCode: number; code: string; message: string; details?: unknown },
): FastifyReply {
  const rendered = surface.renderError({
    statusCode: error.statusCode,
    code: error.code,
    message: error.message,
    requestId: request.id,
    url: request.url,
    ...(error.details !== undefined ? { details: error.details } : {}),
  });
  return reply.code(error.statusCode).type(rendered.contentType).send(typeof rendered.body === 'string' || Buffer.isBuffer(rendered.body) ? rendered.body : JSON.stringify(rendered.body));
}
