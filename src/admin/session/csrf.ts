/**
 * Cross-site request forgery defence in depth (OWASP CSRF Prevention Cheat Sheet):
 *  1. the session cookie is SameSite=Strict;
 *  2. every state-changing request carries a synchroniser token in the X-CSRF-Token header. The
 *     token is an HMAC of the session id, so it is bound to the session, needs no storage, and
 *     cannot be computed without the HttpOnly cookie; a custom header also cannot be sent
 *     cross-origin without a CORS preflight, which this origin never grants;
 *  3. Origin (or, without it, Sec-Fetch-Site) must name this origin.
 * Sign-in has no session yet, so it relies on 3 and on its JSON content type (a cross-site form
 * cannot send application/json without a preflight).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const csrfHeaderName = 'x-csrf-token';

export function csrfTokenFor(sessionId: string): string {
  return createHmac('sha256', sessionId).update('clinical-gateway admin csrf v1').digest('base64url');
}

export function csrfTokenMatches(sessionId: string, presented: string | string[] | undefined): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfTokenFor(sessionId));
  const actual = Buffer.from(presented);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** False when the browser says the request was started by another origin. */
export function isSameOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '') {
    if (origin === 'null') return false;
    try {
      // Through URL on both sides so that default ports compare equal (localhost:80 = localhost).
      const parsed = new URL(origin);
      return parsed.host === new URL(`${parsed.protocol}//${request.headers.host ?? ''}`).host;
    } catch {
      return false;
    }
  }
  const fetchSite = request.headers['sec-fetch-site'];
  return fetchSite === undefined || fetchSite === 'same-origin' || fetchSite === 'none';
}

export function isStateChanging(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method);
}
