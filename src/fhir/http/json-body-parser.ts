import type { FastifyInstance } from 'fastify';

/** Methods whose FHIR interactions carry a body (http.html): only for these is an empty one an error. */
const methodsWithBody = new Set(['POST', 'PUT', 'PATCH']);

/**
 * JSON bodies (http.html#mime-type: application/fhir+json; application/json too). A request of a
 * method that carries no body (DELETE of a Bulk Data export, a GET or an OPTIONS from a client
 * that sets Content-Type on every request) may come with an empty one whatever its Content-Type:
 * RFC 9110 section 8.3 lets a sender label even an empty content, and several FHIR clients do.
 */
export function registerJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(['application/json', 'application/fhir+json', 'application/json+fhir'], { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0 && !methodsWithBody.has(request.method)) return done(null, undefined);
    parseJson(request, body as string, done); // parseAs: string
  });
}
