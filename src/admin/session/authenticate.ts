import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Database } from '../../storage/database.ts';
import { authenticateBearer, presentedBearer } from './bearer.ts';
import { readCookie, sessionCookieName } from './cookies.ts';
import { csrfHeaderName, csrfTokenMatches, isSameOrigin, isStateChanging } from './csrf.ts';
import { findSession, type SessionUser } from './session-store.ts';

export interface AdminSession {
  idHash: Buffer;
  sessionId: string;
  user: SessionUser;
  /** Set when an automation token, not a session, authenticated the request (./bearer.ts). */
  automationToken?: { id: string; prefix: string };
}

declare module 'fastify' {
  interface FastifyRequest {
    adminSession: AdminSession | null;
  }
}

/**
 * Every route registered in `scope` needs a live session; state-changing ones also need the
 * session's CSRF token and a same-origin request. Runs before the body is parsed. A service
 * administrator's automation token (Authorization: Bearer) stands in for a session.
 */
export function requireSession(scope: FastifyInstance, database: Database, idleSeconds: number): void {
  scope.addHook('onRequest', async (request) => {
    const bearer = presentedBearer(request);
    if (bearer !== undefined) {
      const { user, token } = await authenticateBearer(database, request, bearer);
      request.adminSession = { idHash: Buffer.alloc(0), sessionId: '', user, automationToken: token };
      request.log = request.log.child({ automationTokenId: token.id });
      return;
    }
    const sessionId = readCookie(request.headers.cookie, sessionCookieName);
    const session = await findSession(database, sessionId, idleSeconds);
    if (!session || !sessionId) throw new HttpProblem(401, 'unauthenticated', 'sign in first: there is no session, or it has ended');
    if (isStateChanging(request.method)) {
      if (!isSameOrigin(request)) throw new HttpProblem(403, 'cross-origin', 'the request did not come from this origin');
      if (!csrfTokenMatches(sessionId, request.headers[csrfHeaderName])) {
        throw new HttpProblem(403, 'csrf', 'the X-CSRF-Token header is missing or does not match the session');
      }
    }
    request.adminSession = { idHash: session.idHash, sessionId, user: session.user };
    request.log = request.log.child({ userId: session.user.id });
  });
}

export function sessionOf(request: FastifyRequest): AdminSession {
  if (!request.adminSession) throw new Error('no session: the route is not behind requireSession');
  return request.adminSession;
}
