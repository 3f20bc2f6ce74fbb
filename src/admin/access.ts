/**
 * Who may do what (issue 7 point 3). A service admin acts on every site; a site admin and a
 * clinician only on their own. A site the user may not see answers 404 exactly like a site that
 * does not exist; a page of their own site that their role does not include answers 403.
 */
import type { FastifyRequest } from 'fastify';
import { findSiteById, siteContextFor, type Site } from '../domain/sites/sites.ts';
import { automationTokenActor } from '../domain/keys/automation-tokens.ts';
import type { Actor, SiteContext } from '../domain/site-context.ts';
import type { UserRole } from '../domain/users/users.ts';
import { HttpProblem } from '../platform/http/http-problem.ts';
import type { Queryable } from '../storage/database.ts';
import { sessionOf } from './session/authenticate.ts';

/** What each area of the app needs. */
export const areaRoles = {
  siteSettings: ['service-admin', 'site-admin'],
  users: ['service-admin', 'site-admin'],
  keys: ['service-admin', 'site-admin'],
  clients: ['service-admin', 'site-admin'],
  messages: ['service-admin', 'site-admin'],
  connectivity: ['service-admin', 'site-admin'],
  audit: ['service-admin', 'site-admin'],
  exports: ['service-admin', 'site-admin'],
  worklist: ['service-admin', 'site-admin', 'clinician'],
  reportWriting: ['clinician'],
} as const satisfies Record<string, readonly UserRole[]>;

export type Area = keyof typeof areaRoles;

export function requireRole(request: FastifyRequest, area: Area): void {
  const { user } = sessionOf(request);
  if (!(areaRoles[area] as readonly UserRole[]).includes(user.role)) {
    throw new HttpProblem(403, 'forbidden', `your role (${user.role}) does not include this`);
  }
}

export function canSeeSite(request: FastifyRequest, siteId: string): boolean {
  const { user } = sessionOf(request);
  return user.role === 'service-admin' || user.siteId === siteId;
}

/** The site of the URL as the signed-in user may act on it, for an area of the app. */
export async function siteForArea(db: Queryable, request: FastifyRequest, siteId: string, area: Area): Promise<{ site: Site; context: SiteContext }> {
  const site = canSeeSite(request, siteId) ? await findSiteById(db, siteId) : undefined;
  if (!site) throw new HttpProblem(404, 'not-found', 'no such site');
  requireRole(request, area);
  return { site, context: siteContextFor(site, actorOf(request)) };
}

/** The signed-in user, or the automation token the request presented. */
export function actorOf(request: FastifyRequest): Actor {
  const session = sessionOf(request);
  if (session.automationToken) return automationTokenActor(session.automationToken);
  return { kind: 'user', userId: session.user.id };
}
