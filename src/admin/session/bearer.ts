/**
 * Authorization: Bearer on the admin JSON API: a service-administrator automation token instead
 * of a session (src/domain/keys/automation-tokens.ts). No cookie is involved, so no CSRF token
 * is needed; a request carrying both a bearer token and a session cookie is refused rather than
 * guessing which of the two speaks for it. Every request made with a token is in the audit log.
 */
import type { FastifyRequest } from 'fastify';
import { recordAudit } from '../../domain/audit/audit.ts';
import { authenticateAutomationToken, automationTokenActor } from '../../domain/keys/automation-tokens.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Database } from '../../storage/database.ts';
import { readCookie, sessionCookieName } from './cookies.ts';
import type { SessionUser } from './session-store.ts';

export const bearerChallenge = 'Bearer realm="clinical-gateway-admin"';

/**
 * The bearer credential of the request, or undefined when it sent none. Other schemes are left
 * alone: a reverse proxy's own Basic authentication must not stop the browser's session.
 */
export function presentedBearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined || !/^Bearer(\s|$)/i.test(header)) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthenticated('the Authorization header must read "Bearer <automation token>"');
  return match[1]!;
}

function unauthenticated(message: string): HttpProblem {
  return new HttpProblem(401, 'unauthenticated', message, { headers: { 'www-authenticate': `${bearerChallenge}, error="invalid_token"` } });
}

/** The token's identity as the routes see a signed-in user: a service admin of no site. */
export async function authenticateBearer(database: Database, request: FastifyRequest, presented: string): Promise<{ user: SessionUser; token: { id: string; prefix: string } }> {
  if (readCookie(request.headers.cookie, sessionCookieName) !== undefined) {
    throw new HttpProblem(400, 'ambiguous-credentials', 'send either a bearer token or a session cookie, not both');
  }
  const result = await authenticateAutomationToken(database, presented);
  if (!result.ok) throw unauthenticated(`the automation token is ${result.reason === 'malformed' ? 'malformed' : result.reason === 'unknown' ? 'unknown' : result.reason}`);
  // Sessions are a browser's: signing out or changing "my" password means nothing for a token.
  if (request.routeOptions.url?.startsWith('/api/session')) throw new HttpProblem(403, 'forbidden', 'an automation token has no session');
  const { token } = result;
  await recordAudit(database, {
    siteId: null,
    actor: automationTokenActor(token),
    action: 'automation-token.used',
    targetType: 'admin-api',
    // The route's pattern, not the URL: a query string may hold a patient's identifier.
    details: { method: request.method, route: request.routeOptions.url ?? null },
  });
  return { user: { id: token.id, siteId: null, email: token.prefix, role: 'service-admin' }, token };
}
