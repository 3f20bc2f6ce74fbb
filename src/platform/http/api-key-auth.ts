import type { FastifyInstance } from 'fastify';
import { authenticateApiKey } from '../../domain/keys/api-keys.ts';
import { recordRefusedKey } from '../../domain/refused-traffic/refused-key.ts';
import { siteContextFor } from '../../domain/sites/sites.ts';
import type { Database } from '../../storage/database.ts';
import { HttpProblem } from './http-problem.ts';

const messages = {
  missing: 'an X-API-Key header is required',
  malformed: 'the X-API-Key header is not a Clinical Gateway API key',
  unknown: 'the API key is not valid',
  revoked: 'the API key has been revoked',
} as const;

/**
 * RFC 9110 section 11.6.1: a 401 carries a WWW-Authenticate challenge. No registered scheme
 * names a key in a header of its own, so the challenge names the scheme and the header it is
 * read from, in the auth-param syntax of section 11.2.
 */
export const apiKeyChallenge = 'ApiKey realm="clinical-gateway", header="X-API-Key"';

/** X-API-Key on every route of the origin except public ones and unknown paths (those are 404s). */
export function installApiKeyAuthentication(app: FastifyInstance, database: Database, surfaceName: string): void {
  app.addHook('onRequest', async (request) => {
    // A surface's own credential (the DICOMweb viewing token) may have authenticated it already.
    if (request.siteContext || request.routeOptions.config?.public || request.is404 || isDocumentation(request.url)) return;
    const header = request.headers['x-api-key'];
    const presented = Array.isArray(header) ? header[0] : header;
    const result = await authenticateApiKey(database, presented);
    if (!result.ok && (result.reason === 'unknown' || result.reason === 'revoked')) await recordRefusedKey(database, request, presented, result.reason, surfaceName);
    if (!result.ok) throw new HttpProblem(401, 'unauthenticated', messages[result.reason], { headers: { 'www-authenticate': apiKeyChallenge } });
    request.siteContext = siteContextFor(result.site, { kind: 'api-key', keyId: result.keyId, userId: result.userId });
  });
}

function isDocumentation(url: string): boolean {
  return url === '/api/documentation' || url.startsWith('/api/documentation/');
}
