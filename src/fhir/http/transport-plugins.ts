import compress from '@fastify/compress';
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { HttpProblem } from '../../platform/http/http-problem.ts';

/** Below this a compressed body saves less than the work costs (an OperationOutcome, a small resource). */
const compressionThresholdBytes = 1024;

/**
 * Response compression (RFC 9110 section 8.4 and 12.5.3): br or gzip as Accept-Encoding asks,
 * identity when it asks for neither, with Vary: Accept-Encoding. A compressed request body
 * (Content-Encoding) is inflated before parsing, and the body limit bounds the inflated size.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  await app.register(compress, {
    encodings: ['br', 'gzip'],
    threshold: compressionThresholdBytes,
    requestEncodings: ['br', 'gzip', 'deflate', 'identity'],
    onUnsupportedRequestEncoding: (encoding) =>
      new HttpProblem(415, 'unsupported-media-type', `Content-Encoding ${JSON.stringify(encoding)} is not supported: send br, gzip, deflate or an uncompressed body`),
    onInvalidRequestPayload: (encoding) => new HttpProblem(400, 'invalid', `the body is not valid ${encoding} data`),
  });
}

/** The headers a FHIR browser app sends (http.html) and those it must be able to read. */
const allowedRequestHeaders = ['x-api-key', 'content-type', 'accept', 'prefer', 'if-match', 'if-none-match', 'if-modified-since', 'if-none-exist'];
/**
 * Beyond the CORS-safelisted ones (Fetch standard: Content-Type, Expires, Last-Modified, …, listed
 * anyway for clients that look them up here): the version and where a resource is (http.html),
 * the Bulk Data status URL, progress and polling pace (Bulk Data IG v2.0.0 export.html: kick-off
 * Content-Location, status X-Progress and Retry-After, manifest Expires), the challenge of a 401,
 * and the request id an operator asks for.
 */
const exposedResponseHeaders = ['etag', 'last-modified', 'location', 'content-location', 'x-progress', 'retry-after', 'expires', 'www-authenticate', 'x-request-id'];

/**
 * CORS (Fetch standard, section 3.2) for browser apps on the configured origins only. The API key
 * travels in a header of its own, never in a cookie, so credentials mode is never allowed: no
 * Access-Control-Allow-Credentials, and an origin not in the list gets no CORS headers at all (its
 * preflight falls through to authentication and is refused). Not registered when the list is empty.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  await app.register(cors, {
    origin: (origin, callback) => {
      if (origin === undefined) return callback(null, false);
      if (anyOrigin) return callback(null, '*');
      callback(null, allowed.has(origin.toLowerCase()) ? origin : false);
    },
    credentials: false,
    // DELETE cancels a Bulk Data export (its status URL).
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: allowedRequestHeaders,
    exposedHeaders: exposedResponseHeaders,
    maxAge: 600,
    strictPreflight: true,
  });
}
