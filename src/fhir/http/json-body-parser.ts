import type { FastifyInstance } from 'fastify';
import { HttpProblem } from '../../platform/http/http-problem.ts';

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
  app.addContentTypeParser(['application/json', 'application/fhir+json', 'application/json+fhir'], { parseAs: 'buffer' }, (request, body, done) => {
    if (body.length === 0 && !methodsWithBody.has(request.method)) return done(null, undefined);
    const text = utf8Text(body as Buffer);
    if (text === undefined) return done(new HttpProblem(400, 'invalid', 'the body is not UTF-8, which FHIR JSON always is (http.html#mime-type)'), undefined);
    parseJson(request, text, done);
  });
}

// Decoding with replacement would store U+FFFD in place of each byte that is not UTF-8 (a name
// sent in Latin-1 would lose its letters without anyone being told); fatal refuses the body.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8Text(body: Buffer): string | undefined {
  try {
    return decoder.decode(body);
  } catch {
    return undefined;
  }
}
