import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { Database } from '../../src/storage/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { runCliJson } from '../support/cli.ts';
import { createTestSite } from '../support/sites.ts';
import { adminOriginForFile, as, createTestUser, signIn } from './support.ts';

const origin = adminOriginForFile();
/** A second node: its own pool, its own cache, its own notification listener. */
let otherNodeDatabase: Database | undefined;
let otherNode: FastifyInstance | undefined;
async function startOtherNode(): Promise<{ database: Database; app: FastifyInstance }> {
  otherNodeDatabase = new Database({ connectionString: origin.db.connectionString, maxConnections: 4 });
  otherNode = await buildTestOrigin(adminSurface, otherNodeDatabase);
  return { database: otherNodeDatabase, app: otherNode };
}
after(async () => {
  await otherNode?.close();
  await otherNodeDatabase?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function createToken(payload: Record<string, unknown> = {}): Promise<{ id: string; prefix: string; token: string }> {
  const response = await origin.app.inject(as(origin.service, { method: 'POST', url: '/api/automation-tokens', payload }));
  assert.equal(response.statusCode, 201, response.body);
  assert.equal(response.headers['cache-control'], 'no-store');
  const body = response.json();
  return { id: body.automation_token.id, prefix: body.automation_token.prefix, token: body.token };
}

test('a token is shown once, stored only as a hash, and listed by prefix', async () => {
  const created = await createToken({ label: 'fleet provisioning', expires_at: '30d' });
  assert.match(created.token, /^cgat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  assert.ok(created.token.startsWith(`${created.prefix}_`));
  const { rows } = await origin.db.database.query<Record<string, unknown>>('SELECT * FROM automation_token WHERE id = $1', [created.id]);
  const stored = JSON.stringify(rows[0], (_key, value) => (value?.type === 'Buffer' ? Buffer.from(value.data).toString('base64url') : value));
  assert.equal(stored.includes(created.token.slice(-43)), false, 'the secret is not stored');
  assert.equal((rows[0]!.secret_hash as Buffer).length, 32, 'a SHA-256');
  const listed = await origin.app.inject(as(origin.service, { method: 'GET', url: '/api/automation-tokens' }));
  assert.equal(listed.statusCode, 200);
  const entry = listed.json().tokens.find((token: { id: string }) => token.id === created.id);
  assert.equal(entry.label, 'fleet provisioning');
  assert.ok(Date.parse(entry.expires_at) > Date.now() + 29 * 86_400_000);
  assert.equal(listed.body.includes(created.token.slice(-43)), false, 'listing never shows the secret');
});

test('a bearer token reads and writes without cookie or CSRF token, and every use is audited with the token as actor', async () => {
  const { id, prefix, token } = await createToken({ label: 'script' });
  const read = await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(token) });
  assert.equal(read.statusCode, 200, read.body);
  const ae = `AT${Math.random().toString(36).slice(2, 12).toUpperCase()}`;
  const write = await origin.app.inject({ method: 'POST', url: '/api/sites', headers: bearer(token), payload: { name: `Scripted ${ae}`, ae_title: ae } });
  assert.equal(write.statusCode, 201, write.body);
  const siteId = write.json().id;
  const patched = await origin.app.inject({ method: 'PATCH', url: `/api/sites/${siteId}`, headers: bearer(token), payload: { patient_put_creates: true } });
  assert.equal(patched.statusCode, 200, patched.body);
  const actor = `automation-token:${id}/${prefix}`;
  const { rows } = await origin.db.database.query<{ action: string; details: Record<string, unknown> }>('SELECT action, details FROM audit_event WHERE actor = $1 ORDER BY id', [actor]);
  assert.deepEqual(rows.map((row) => row.action), ['automation-token.used', 'automation-token.used', 'site.created', 'automation-token.used', 'site.updated']);
  assert.deepEqual(rows[1]!.details, { method: 'POST', route: '/api/sites' });
  assert.deepEqual(rows[3]!.details, { method: 'PATCH', route: '/api/sites/:siteId' });
});

test('revocation is refused at once, on this node and another one that had the token cached', async () => {
  const { id, token } = await createToken();
  const { database: otherNodeDatabase, app: otherNode } = await startOtherNode();
  assert.equal((await otherNode.inject({ method: 'GET', url: '/api/sites', headers: bearer(token) })).statusCode, 200);
  await otherNodeDatabase.credentialChanges.listening();
  const beforeRevocation = otherNodeDatabase.credentialChanges.token()!;
  const revoked = await origin.app.inject(as(origin.service, { method: 'POST', url: `/api/automation-tokens/${id}/revoke` }));
  assert.equal(revoked.statusCode, 200, revoked.body);
  assert.ok(revoked.json().revoked_at);
  const here = await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(token) });
  assert.equal(here.statusCode, 401);
  assert.match(String(here.headers['www-authenticate']), /^Bearer /);
  assert.match(here.json().message ?? here.body, /revoked/);
  await otherNodeDatabase.credentialChanges.changedSince(beforeRevocation);
  assert.equal((await otherNode.inject({ method: 'GET', url: '/api/sites', headers: bearer(token) })).statusCode, 401);
  const { rows } = await origin.db.database.query('SELECT 1 FROM audit_event WHERE action = $1 AND target_id = $2', ['automation-token.revoked', id]);
  assert.equal(rows.length, 1);
});

test('an expired token, an unknown one and a malformed header are 401', async () => {
  const { id, token } = await createToken({ expires_at: '1d' });
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(token) })).statusCode, 200);
  // Time passes: moved here by hand, so wait for the change's notification like a second node would.
  await origin.db.database.credentialChanges.listening();
  const beforeChange = origin.db.database.credentialChanges.token()!;
  await origin.db.database.query("UPDATE automation_token SET expires_at = now() - interval '1 second', created_at = now() - interval '1 day' WHERE id = $1", [id]);
  await origin.db.database.credentialChanges.changedSince(beforeChange);
  const expired = await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(token) });
  assert.equal(expired.statusCode, 401);
  assert.match(expired.body, /expired/);
  const unknown = `${token.slice(0, -43)}${'A'.repeat(43)}`;
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(unknown) })).statusCode, 401);
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: { authorization: 'Bearer' } })).statusCode, 401);
  // Another scheme (a reverse proxy's Basic authentication) is not ours: the session decides.
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: { authorization: 'Basic dXNlcjpwYXNz' } })).statusCode, 401);
  assert.equal((await origin.app.inject(as(origin.service, { method: 'GET', url: '/api/sites', headers: { authorization: 'Basic dXNlcjpwYXNz' } }))).statusCode, 200);
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer('cg_0123456789ab_nope') })).statusCode, 401);
});

test('a session cookie together with a bearer token is refused; a token has no session and cannot manage tokens', async () => {
  const { token } = await createToken();
  const both = await origin.app.inject({ method: 'GET', url: '/api/sites', headers: { ...bearer(token), cookie: origin.service.cookie } });
  assert.equal(both.statusCode, 400);
  assert.match(both.body, /ambiguous-credentials/);
  assert.equal((await origin.app.inject({ method: 'DELETE', url: '/api/session', headers: bearer(token) })).statusCode, 403);
  assert.equal((await origin.app.inject({ method: 'POST', url: '/api/automation-tokens', headers: bearer(token), payload: {} })).statusCode, 403);
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/automation-tokens', headers: bearer(token) })).statusCode, 403);
});

test('only a service admin manages tokens; bad expiries are named', async () => {
  const site = await createTestSite(origin.db.database);
  const siteAdmin = await signIn(origin.app, (await createTestUser(origin.db.database, site, 'site-admin')).email);
  assert.equal((await origin.app.inject(as(siteAdmin, { method: 'POST', url: '/api/automation-tokens', payload: {} }))).statusCode, 403);
  assert.equal((await origin.app.inject(as(siteAdmin, { method: 'GET', url: '/api/automation-tokens' }))).statusCode, 403);
  for (const expires_at of ['tomorrow', '2001-01-01T00:00:00Z']) {
    const response = await origin.app.inject(as(origin.service, { method: 'POST', url: '/api/automation-tokens', payload: { expires_at } }));
    assert.equal(response.statusCode, 400, `${expires_at}: ${response.body}`);
    assert.match(response.body, /expires_at/);
  }
  const missing = await origin.app.inject(as(origin.service, { method: 'POST', url: '/api/automation-tokens/8a6c3f4e-1111-4222-8333-123456789abc/revoke' }));
  assert.equal(missing.statusCode, 404);
});

test('a token made with the CLI works on the API, and CLI revocation stops it', async () => {
  const created = await runCliJson<{ id: string; prefix: string; token: string }>(['automation-token', 'create', '--label', 'cli'], { CG_DATABASE_URL: origin.db.connectionString });
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(created.token) })).statusCode, 200);
  await origin.db.database.credentialChanges.listening();
  const beforeRevocation = origin.db.database.credentialChanges.token()!;
  await runCliJson(['automation-token', 'revoke', created.prefix], { CG_DATABASE_URL: origin.db.connectionString });
  await origin.db.database.credentialChanges.changedSince(beforeRevocation);
  assert.equal((await origin.app.inject({ method: 'GET', url: '/api/sites', headers: bearer(created.token) })).statusCode, 401);
});
