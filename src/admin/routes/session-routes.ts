/** Sign-in, the current session, sign-out and changing one's own password. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authenticateUser, findUserById, setPassword } from '../../domain/users/users.ts';
import { verifyPassword } from '../../domain/users/password.ts';
import { DomainError } from '../../domain/errors.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { clearedSessionCookie, readCookie, sessionCookie, sessionCookieName } from '../session/cookies.ts';
import { csrfTokenFor, isSameOrigin } from '../session/csrf.ts';
import { sessionOf } from '../session/authenticate.ts';
import { createSession, deleteSession, deleteUserSessions, findSession, idleWarningSeconds, sessionAbsoluteSeconds, touchSession, type SessionUser } from '../session/session-store.ts';
import { recordSignInEvent } from '../session/sign-in-audit.ts';
import { countSignInAttempt, forgetEndedWindows, recordSignInSuccess, signInAttempt, type SignInAttempt } from '../session/sign-in-throttle.ts';
import { errorResponses, sessionSchema } from './schemas.ts';

const tags = ['session'];

function sessionBody(user: SessionUser, sessionId: string, expiresAt: Date, idleSeconds: number) {
  return {
    user: { id: user.id, site_id: user.siteId, email: user.email, role: user.role },
    csrf_token: csrfTokenFor(sessionId),
    expires_at: expiresAt,
    idle_timeout_seconds: idleSeconds,
    idle_warning_seconds: idleWarningSeconds(idleSeconds),
  };
}

/** Public: sign-in (it creates the session, so it cannot require one). */
export async function registerSignIn(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  app.post(
    '/api/session',
    {
      schema: {
        summary: 'Sign in with e-mail and password',
        description: 'Sets the HttpOnly session cookie and returns the CSRF token to send as X-CSRF-Token on every state-changing request. Failed attempts are limited per account and per address (429 with Retry-After).',
        tags,
        security: [],
        body: {
          type: 'object',
          required: ['email', 'password'],
          additionalProperties: false,
          properties: { email: { type: 'string', minLength: 1, maxLength: 320 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
        },
        response: { 200: sessionSchema, ...errorResponses, 429: errorResponses[401] },
      },
    },
    async (request: FastifyRequest<{ Body: { email: string; password: string } }>, reply: FastifyReply) => {
      if (!isSameOrigin(request)) throw new HttpProblem(403, 'cross-origin', 'the request did not come from this origin');
      const { email, password } = request.body;
      const attempt = signInAttempt(email, request.ip);
      await refuseThrottled(database, request, attempt, 'too many failed sign-ins');
      const user = await authenticateUser(database, email, password);
      if (!user) {
        await recordSignInEvent(database, request, 'sign-in.failed', attempt);
        await forgetEndedWindows(database);
        // One message for unknown e-mail, wrong password and deactivated account alike.
        throw new HttpProblem(401, 'invalid-credentials', 'the e-mail address or password is not correct');
      }
      await recordSignInSuccess(database, attempt);
      const idleSeconds = services.config.adminSession.idleSeconds;
      const { sessionId, expiresAt } = await createSession(database, user, { remoteAddress: request.ip, userAgent: request.headers['user-agent'] }, idleSeconds);
      reply.header('set-cookie', sessionCookie(sessionId, { secure: reachedOverHttps(request, services), maxAgeSeconds: sessionAbsoluteSeconds }));
      request.log.info({ userId: user.id }, 'signed in');
      return sessionBody({ id: user.id, siteId: user.siteId, email: user.email, role: user.role }, sessionId, expiresAt, idleSeconds);
    },
  );
}

/**
 * Public: who is signed in. Answers 200 with user null rather than 401 when nobody is, because
 * the app asks this on every load and an expected state is not an error.
 */
export async function registerSessionProbe(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  app.get(
    '/api/session',
    {
      schema: {
        summary: 'The signed-in user and the CSRF token (user null when not signed in)',
        tags,
        security: [],
        response: { 200: { type: 'object', properties: { ...sessionSchema.properties, user: { anyOf: [sessionSchema.properties.user, { type: 'null' }] } } }, ...errorResponses },
      },
    },
    async (request) => {
      const sessionId = readCookie(request.headers.cookie, sessionCookieName);
      const idleSeconds = services.config.adminSession.idleSeconds;
      const session = await findSession(database, sessionId, idleSeconds);
      if (!session || !sessionId) return { user: null };
      return sessionBody(session.user, sessionId, session.expiresAt, idleSeconds);
    },
  );
}

/** Needs a session: sign-out, change my password. */
export async function registerSessionRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  app.delete('/api/session', { schema: { summary: 'Sign out', tags, response: { 204: { type: 'null' }, ...errorResponses } } }, async (request, reply) => {
    await deleteSession(database, sessionOf(request).idHash);
    reply.header('set-cookie', clearedSessionCookie({ secure: reachedOverHttps(request, services) }));
    return reply.code(204).send();
  });

  app.post(
    '/api/session/extend',
    {
      schema: {
        summary: 'Stay signed in',
        description: 'Restarts the idle limit from now (the app offers it before the session idles out). The absolute limit of 12 hours still applies.',
        tags,
        response: { 200: sessionSchema, ...errorResponses },
      },
    },
    async (request) => {
      const session = sessionOf(request);
      await touchSession(database, session.idHash);
      const { rows } = await database.query<{ expires_at: Date }>('SELECT expires_at FROM admin_session WHERE id_hash = $1', [session.idHash]);
      if (!rows[0]) throw new HttpProblem(401, 'unauthenticated', 'sign in first: there is no session, or it has ended');
      return sessionBody(session.user, session.sessionId, rows[0].expires_at, services.config.adminSession.idleSeconds);
    },
  );

  app.put(
    '/api/session/password',
    {
      schema: {
        summary: 'Change my password',
        description: 'Needs the current password. Every other session of the user ends.',
        tags,
        body: {
          type: 'object',
          required: ['current_password', 'new_password'],
          additionalProperties: false,
          properties: { current_password: { type: 'string', maxLength: 1024 }, new_password: { type: 'string', maxLength: 1024 } },
        },
        response: { 204: { type: 'null' }, ...errorResponses, 429: errorResponses[401] },
      },
    },
    async (request: FastifyRequest<{ Body: { current_password: string; new_password: string } }>, reply) => {
      const session = sessionOf(request);
      // The current password is a password guess like a sign-in: the same limits apply, so a
      // borrowed session cannot be used to find the password.
      const attempt = signInAttempt(session.user.email, request.ip);
      await refuseThrottled(database, request, attempt, 'too many wrong passwords');
      const { rows } = await database.query<{ password_hash: string | null }>('SELECT password_hash FROM app_user WHERE id = $1', [session.user.id]);
      if (!(await verifyPassword(request.body.current_password, rows[0]?.password_hash ?? null))) {
        await recordSignInEvent(database, request, 'password-change.failed', attempt, { kind: 'user', userId: session.user.id });
        throw new DomainError('invalid', 'the current password is not correct', [{ message: 'the current password is not correct', location: 'current_password' }]);
      }
      await recordSignInSuccess(database, attempt);
      if (!(await findUserById(database, session.user.id))) throw new HttpProblem(401, 'unauthenticated', 'the account no longer exists');
      await database.transaction(async (tx) => {
        await setPassword(tx, session.user.id, request.body.new_password, { kind: 'user', userId: session.user.id }).catch((error: unknown) => {
          throw relocate(error, 'password', 'new_password');
        });
        await deleteUserSessions(tx, session.user.id, session.idHash);
      });
      return reply.code(204).send();
    },
  );
}

/**
 * Counts the attempt before any password is checked (so concurrent guesses cannot all pass) and
 * answers 429 with Retry-After once a limit is passed; the attempt that passes it is audited.
 */
async function refuseThrottled(database: Services['database'], request: FastifyRequest, attempt: SignInAttempt, what: string): Promise<void> {
  const { blockedFor, lockedOutNow } = await countSignInAttempt(database, attempt);
  if (lockedOutNow) await recordSignInEvent(database, request, 'sign-in.locked-out', attempt);
  if (blockedFor > 0) {
    throw new HttpProblem(429, 'rate-limited', `${what}; try again in ${Math.ceil(blockedFor / 60)} minute(s)`, { headers: { 'retry-after': String(blockedFor) } });
  }
}

/** The domain says "password"; this form's field is new_password. */
function relocate(error: unknown, from: string, to: string): unknown {
  if (!(error instanceof DomainError)) return error;
  return new DomainError(error.code, error.message, error.issues.map((issue) => (issue.location === from ? { ...issue, location: to } : issue)));
}

/**
 * Secure cookies when the browser reached the app over HTTPS: this origin's own TLS, or a
 * trusted load balancer's (X-Forwarded-Proto: https from an address in CG_TRUSTED_PROXIES).
 */
function reachedOverHttps(request: FastifyRequest, services: Services): boolean {
  return services.config.tls !== undefined || request.protocol === 'https';
}
