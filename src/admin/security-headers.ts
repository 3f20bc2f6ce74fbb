import type { FastifyInstance } from 'fastify';

/**
 * Browser hardening for the app and its API (OWASP HTTP Headers Cheat Sheet). The documentation
 * pages set their own policy (Swagger UI's), so they are left alone.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function installSecurityHeaders(app: FastifyInstance, options: { tls: boolean }): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/api/documentation')) return payload;
    reply.header('content-security-policy', contentSecurityPolicy);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
    if (options.tls) reply.header('strict-transport-security', 'max-age=31536000');
    if (request.url.startsWith('/api/') && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
