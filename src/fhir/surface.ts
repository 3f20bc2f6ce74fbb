import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isWriteMethod, refuseNewDataWhileDiskLow } from '../platform/disk-space/refuse-new-data.ts';
import { refuseUnstorableText } from '../platform/http/storable-text.ts';
import type { HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';
import { registerBundleRoute } from './bundle/bundle-route.ts';
import { capabilityStatement } from './capability/capability-statement.ts';
import { isStoredResourceType } from '../domain/records/search-parameters.ts';
import { resourceDefinitions } from './capability/resource-definitions.ts';
import { baseUrl, sendJson } from './http/resource-response.ts';
import { registerJsonBodyParser } from './http/json-body-parser.ts';
import { registerCompression, registerCors } from './http/transport-plugins.ts';
import { renderOperationOutcome } from './outcome.ts';
import { createFhirContext } from './routes/fhir-context.ts';
import { registerSystemHistoryRoute, registerTypeHistoryRoute } from './routes/history-list-routes.ts';
import { registerEverythingRoute } from './routes/everything-route.ts';
import { registerExportRoutes } from './routes/export-routes.ts';
import { registerHistoryRoutes } from './routes/history-routes.ts';
import { registerMethodNotAllowed } from './routes/method-not-allowed.ts';
import { registerReadRoutes } from './routes/read-routes.ts';
import { fhirRoute, resourceResponses } from './routes/route-options.ts';
import { registerSearchRoutes } from './routes/search-routes.ts';
import { registerWriteRoutes } from './routes/write-routes.ts';

const software = { name: 'Clinical Gateway', version: '0.1.0' };

/**
 * The FHIR R4 origin (DESIGN.md section 1, issue 3): /fhir/metadata and, for each type of the
 * capability definitions, exactly its interactions; every other method on those paths is a 405,
 * every other path a 404, and every failure an OperationOutcome.
 */
export const fhirSurface: HttpSurface = {
  name: 'fhir',
  title: 'Clinical Gateway FHIR R4 API',
  description:
    'FHIR R4 (4.0.1) JSON API over the site of the API key: Patient, Condition, AllergyIntolerance, Observation, ' +
    'Procedure and DocumentReference (read, vread, history, search, create, update) and DiagnosticReport ' +
    '(read, vread, search); batch and transaction Bundles at POST /fhir. GET /fhir/metadata is the authority on what is supported. A search or history parameter the ' +
    'server does not apply is refused with 400 and an OperationOutcome naming it, unless the request carries Prefer: handling=lenient.',
  auth: 'api-key',
  renderError: renderOperationOutcome,
  async registerBeforeAuthentication(app: FastifyInstance, services: Services) {
    await registerCors(app, services.config.fhirCorsOrigins);
    await registerCompression(app);
  },
  async register(app: FastifyInstance, services: Services) {
    // http.html#mime-type: application/fhir+json is the FHIR JSON type; application/json is accepted too.
    registerJsonBodyParser(app);
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    // Any other type reaches the route, which answers 415 in FHIR terms (content-negotiation.ts).
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    // A resource body's location is its FHIRPath (OperationOutcome.issue.expression).
    refuseUnstorableText(app, (part, path, body) => {
      if (part !== 'body') return path.join('.');
      const type = (body as { resourceType?: unknown } | null)?.resourceType;
      return [typeof type === 'string' ? type : '', ...path].reduce<string>((text, step) => (typeof step === 'number' ? `${text}[${step}]` : text ? `${text}.${step}` : step), '');
    });

    refuseNewDataWhileDiskLow(app, services, isNewFhirData);

    const context = createFhirContext(services);
    app.get(
      '/fhir/metadata',
      fhirRoute({ summary: 'The CapabilityStatement of this server', tags: ['metadata'], response: resourceResponses('CapabilityStatement', 200) }, { public: true }),
      async (request, reply) => sendJson(reply, 200, capabilityStatement(baseUrl(request), software, { cors: services.config.fhirCorsOrigins.length > 0, bundle: services.config.limits.fhirBundle })),
    );
    registerMethodNotAllowed(app, '/fhir/metadata', ['GET'], 'metadata');
    registerBundleRoute(app, context);
    registerExportRoutes(app, context);
    registerEverythingRoute(app, context);

    registerSystemHistoryRoute(app, context);
    for (const definition of resourceDefinitions) {
      const { type } = definition;
      if (definition.interactions.includes('history-type') && isStoredResourceType(type)) registerTypeHistoryRoute(app, context, type);
      registerReadRoutes(app, context, definition);
      registerSearchRoutes(app, context, definition);
      if (definition.interactions.includes('history-instance')) registerHistoryRoutes(app, context, definition);
      const writable = definition.interactions.includes('create');
      if (writable) registerWriteRoutes(app, context, definition);
      registerMethodNotAllowed(app, `/fhir/${type}`, writable ? ['GET', 'POST', 'PUT'] : ['GET'], type);
      registerMethodNotAllowed(app, `/fhir/${type}/:id`, writable ? ['GET', 'PUT'] : ['GET'], type);
      registerMethodNotAllowed(app, `/fhir/${type}/:id/_history/:vid`, ['GET'], type);
      registerMethodNotAllowed(app, `/fhir/${type}/_search`, ['POST'], type);
      if (definition.interactions.includes('history-instance')) registerMethodNotAllowed(app, `/fhir/${type}/:id/_history`, ['GET'], type);
    }
  },
};

/**
 * Writes and Bundles, and export kick-offs (which write files); not searches by POST, nor an
 * export's status, files or cancellation (which frees space).
 */
function isNewFhirData(request: FastifyRequest): boolean {
  const url = request.routeOptions.url ?? '';
  if (url.includes('$export-status') || url.includes('$export-file') || url.endsWith('/_search')) return false;
  return isWriteMethod(request) || url.endsWith('$export');
}
