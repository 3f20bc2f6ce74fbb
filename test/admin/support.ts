import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createUser, type UserRole } from '../../src/domain/users/users.ts';
import type { Database } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';

export const testPassword = 'correct horse battery staple';

let counter = 0;
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}@example.test`;
}

export async function createTestUser(database: Database, site: SiteContext | null, role: UserRole): Promise<{ id: string; email: string }> {
  const email = uniqueEmail(role);
  const { user } = await createUser(database, { siteId: site?.siteId ?? null, email, role, password: testPassword }, { kind: 'operator' });
  return { id: user.id, email };
}

/** A signed-in browser as far as the API is concerned: the session cookie and the CSRF token. */
export interface Signed {
  cookie: string;
  csrf: string;
  userId: string;
}

export async function signIn(app: FastifyInstance, email: string, password = testPassword, remoteAddress?: string): Promise<Signed> {
  const response = await app.inject({ method: 'POST', url: '/api/session', payload: { email, password }, ...(remoteAddress ? { remoteAddress } : {}) });
  assert.equal(response.statusCode, 200, response.body);
  const setCookie = String(response.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  return { cookie, csrf: response.json().csrf_token, userId: response.json().user.id };
}

/** A request as the web app sends it: cookie, CSRF token, same origin. */
export function as(signed: Signed, options: InjectOptions): InjectOptions {
  return { ...options, headers: { cookie: signed.cookie, 'x-csrf-token': signed.csrf, ...(options.headers ?? {}) } };
}

export interface AdminTestOrigin {
  db: TestDatabase;
  app: FastifyInstance;
  /** A signed-in service administrator. */
  service: Signed;
}

/** A database and an admin origin for the test file, made before its tests and dropped after. */
export function adminOriginForFile(): AdminTestOrigin {
  const origin = {} as AdminTestOrigin;
  before(async () => {
    origin.db = await createTestDatabase();
    origin.app = await buildTestOrigin(adminSurface, origin.db.database);
    origin.service = await signIn(origin.app, (await createTestUser(origin.db.database, null, 'service-admin')).email);
  });
  after(async () => {
    await origin.app.close();
    await origin.db.drop();
  });
  return origin;
}
