/**
 * The admin app's viewer reads this origin with a short-lived token of the signed-in user
 * (src/domain/imaging/viewing-tokens.ts) sent as `Authorization: Bearer` (RFC 6750 section 2.1).
 * It is read-only: GET and HEAD (QIDO-RS, WADO-RS); STOW-RS and anything else need an API key.
 * A request with a bearer token never falls back to X-API-Key: one credential decides.
 */
import type { FastifyInstance } from 'fastify';
import { authenticateViewingToken } from '../domain/imaging/viewing-tokens.ts';
import { siteContextFor } from '../domain/sites/sites.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import type { Database } from '../storage/database.ts';

const challenge = 'Bearer realm="clinical-gateway", error="invalid_token"';

/** `sessionIdleSeconds`: the admin session's idle limit, past which its tokens stop working too. */
export function installViewingTokenAuthentication(app: FastifyInstance, database: Database, sessionIdleSeconds: number): void {
  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config?.public || request.is404 || request.method === 'OPTIONS') return;
    const header = request.headers.authorization;
    if (header === undefined) return;
    const bearer = /^Bearer +(\S+)\s*$/i.exec(header);
    if (!bearer) throw new HttpProblem(401, 'unauthenticated', 'the Authorization header must be "Bearer <token>" (or send X-API-Key instead)', { headers: { 'www-authenticate': challenge } });
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      throw new HttpProblem(403, 'forbidden', 'a viewing token reads only (QIDO-RS and WADO-RS); storing needs an API key', { headers: { 'www-authenticate': 'Bearer realm="clinical-gateway", error="insufficient_scope"' } });
    }
    const result = await authenticateViewingToken(database, bearer[1]!, sessionIdleSeconds);
    if (!result.ok) throw new HttpProblem(401, 'unauthenticated', 'the viewing token is not valid, has expired or was revoked', { headers: { 'www-authenticate': challenge } });
    request.siteContext = siteContextFor(result.site, { kind: 'user', userId: result.userId });
  });
}
