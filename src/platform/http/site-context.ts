import type { FastifyRequest } from 'fastify';
import type { SiteContext } from '../../domain/site-context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    siteContext: SiteContext | null;
  }
  interface FastifyContextConfig {
    /** Routes reachable without credentials (health, readiness, documentation). */
    public?: boolean;
  }
}

/** The caller's site, resolved from its credential before the handler ran. */
export function siteContextOf(request: FastifyRequest): SiteContext {
  if (!request.siteContext) throw new Error('no site context: the route is not behind authentication');
  return request.siteContext;
}
