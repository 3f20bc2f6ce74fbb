import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { accountAddressFailureLimit, accountFailureLimit, addressFailureLimit } from '../../src/admin/session/sign-in-throttle.ts';
import { updateUser } from '../../src/domain/users/users.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { as, createTestUser, signIn, testPassword } from './support.ts';

const run = promisify(execFile);

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(adminSurface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

async function whoIs(cookie: string): Promise<string | null> {
  const response = await app.inject({ url: '/api/session', headers: { cookie } });
  assert.equal(response.statusCode, 200);
  return response.json().user?.email ?? null;
}

test('sign-in sets an HttpOnly SameSite=Strict cookie and the session answers who is signed in', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'site-admin');
  const response = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email.toUpperCase(), password: testPassword } });
  assert.equal(response.statusCode, 200);
  const cookie = String(response.headers['set-cookie']);
  assert.match(cookie, /^cg_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
  assert.doesNotMatch(cookie, /Secure/);
  const body = response.json();
  assert.equal(body.user.email, user.email);
  assert.equal(body.user.role, 'site-admin');
  assert.equal(body.user.site_id, site.siteId);
  const me = await app.inject({ url: '/api/session', headers: { cookie: cookie.split(';')[0]! } });
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().user.id, user.id);
  assert.equal(me.json().csrf_token, body.csrf_token);
  // The session id is stored only as a hash.
  const sessionId = cookie.split(';')[0]!.split('=')[1]!;
  const { rows } = await db.database.query('SELECT count(*)::int AS n FROM admin_session WHERE id_hash = $1', [Buffer.from(sessionId)]);
  assert.equal(rows[0]!.n, 0);
});

test('wrong password, unknown e-mail and a deactivated account get the same 401', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const inactive = await createTestUser(db.database, site, 'clinician');
  await updateUser(db.database, inactive.id, { active: false }, { kind: 'operator' });
  for (const payload of [
    { email: user.email, password: 'not the password at all' },
    { email: 'nobody-here@example.test', password: testPassword },
    { email: inactive.email, password: testPassword },
  ]) {
    const response = await app.inject({ method: 'POST', url: '/api/session', payload, remoteAddress: '192.0.2.50' });
    assert.equal(response.statusCode, 401);
    assert.deepEqual(response.json(), { error: { code: 'invalid-credentials', message: 'the e-mail address or password is not correct' } });
    assert.equal(response.headers['set-cookie'], undefined);
  }
});

test('malformed sign-in bodies are 400 with the field named', async () => {
  const missing = await app.inject({ method: 'POST', url: '/api/session', payload: { email: 'a@b.c' } });
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(missing.json().error.fields, [{ field: 'password', message: 'this field is required' }]);
  const notJson = await app.inject({ method: 'POST', url: '/api/session', headers: { 'content-type': 'application/json' }, payload: '{"email":' });
  assert.equal(notJson.statusCode, 400);
  assert.equal(notJson.json().error.code, 'invalid');
  const form = await app.inject({ method: 'POST', url: '/api/session', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=a&password=b' });
  assert.equal(form.statusCode, 415);
  const huge = await app.inject({ method: 'POST', url: '/api/session', payload: { email: 'a@b.c', password: 'x'.repeat(5000) } });
  assert.equal(huge.statusCode, 400);
});

test('sign-in from another origin is refused', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const response = await app.inject({
    method: 'POST',
    url: '/api/session',
    headers: { origin: 'https://evil.example', host: 'admin.example' },
    payload: { email: user.email, password: testPassword },
  });
  assert.equal(response.statusCode, 403);
  assert.equal(response.json().error.code, 'cross-origin');
});

test('a stranger\'s wrong passwords lock out only the stranger\'s address: the owner still signs in from their own', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  for (let i = 0; i < accountAddressFailureLimit; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: `wrong password ${i}` }, remoteAddress: '198.51.100.1' });
    assert.equal(response.statusCode, 401);
  }
  const blocked = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: testPassword }, remoteAddress: '198.51.100.1' });
  assert.equal(blocked.statusCode, 429, 'the guessing address is refused even with the right password');
  assert.equal(blocked.json().error.code, 'rate-limited');
  const retryAfter = Number(blocked.headers['retry-after']);
  assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
  await signIn(app, user.email, testPassword, '198.51.100.200');
});

test('guessing one account from many addresses is limited, except from an address the owner signed in from', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  await signIn(app, user.email, testPassword, '198.51.100.250');
  for (let i = 0; i < accountFailureLimit; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: `wrong password ${i}` }, remoteAddress: `2001:db8::${(i + 1).toString(16)}` });
    assert.equal(response.statusCode, 401);
  }
  const stranger = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: testPassword }, remoteAddress: '2001:db8::ffff' });
  assert.equal(stranger.statusCode, 429);
  await signIn(app, user.email, testPassword, '198.51.100.250');
  // Another account is not affected.
  const other = await createTestUser(db.database, site, 'clinician');
  await signIn(app, other.email, testPassword, '2001:db8::fffe');
});

test('concurrent guesses are counted before their passwords are checked: no more than the limit are checked', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const burst = await Promise.all(
    Array.from({ length: 30 }, (_, i) => app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: `burst guess ${i}` }, remoteAddress: '192.0.2.180' })),
  );
  const checked = burst.filter((response) => response.statusCode === 401).length;
  const refused = burst.filter((response) => response.statusCode === 429).length;
  assert.equal(checked, accountAddressFailureLimit, `${checked} guesses were checked against a limit of ${accountAddressFailureLimit}`);
  assert.equal(refused, 30 - accountAddressFailureLimit);
});

test('a flood of sign-ins beyond the hashing bound is answered 503 with Retry-After at once, not queued', async () => {
  const flood = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      app.inject({ method: 'POST', url: '/api/session', payload: { email: `flood-${i}@example.test`, password: 'flood flood flood' }, remoteAddress: `198.18.100.${i + 1}` }),
    ),
  );
  const busy = flood.filter((response) => response.statusCode === 503);
  assert.ok(busy.length > 0, 'some sign-ins were refused as busy');
  for (const response of busy) {
    assert.equal(response.json().error.code, 'busy');
    assert.equal(response.headers['retry-after'], '1');
  }
  assert.deepEqual([...new Set(flood.map((response) => response.statusCode))].sort(), [401, 503]);
});

test('failed sign-ins and the lockout are logged in the audit log with the account and the address, never the password', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  for (let i = 0; i <= accountAddressFailureLimit; i++) {
    await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email.toUpperCase(), password: `audited guess ${i}` }, remoteAddress: '192.0.2.190' });
  }
  const { rows } = await db.database.query<{ action: string; actor: string; target_id: string; details: Record<string, string>; site_id: string }>(
    `SELECT action, actor, target_id, details, site_id FROM audit_event WHERE target_id = $1 AND action LIKE 'sign-in.%' ORDER BY id`,
    [user.id],
  );
  assert.deepEqual(rows.map((row) => row.action), [...Array.from({ length: accountAddressFailureLimit }, () => 'sign-in.failed'), 'sign-in.locked-out']);
  for (const row of rows) {
    assert.equal(row.site_id, site.siteId);
    assert.equal(row.actor, 'anonymous@192.0.2.190');
    assert.deepEqual(row.details, { account: user.email.toLowerCase(), address: '192.0.2.190' });
    assert.doesNotMatch(JSON.stringify(row), /audited guess/);
  }
  const unknown = await app.inject({ method: 'POST', url: '/api/session', payload: { email: 'nobody-audited@example.test', password: 'audited guess' }, remoteAddress: '192.0.2.191' });
  assert.equal(unknown.statusCode, 401);
  const { rows: service } = await db.database.query<{ site_id: string | null; details: Record<string, string> }>(
    `SELECT site_id, details FROM audit_event WHERE action = 'sign-in.failed' AND details->>'account' = 'nobody-audited@example.test'`,
  );
  assert.deepEqual(service, [{ site_id: null, details: { account: 'nobody-audited@example.test', address: '192.0.2.191' } }]);
});

test('failed sign-ins are limited per address across accounts', async () => {
  const address = '203.0.113.77';
  for (let i = 0; i < addressFailureLimit; i++) {
    const response = await app.inject({ method: 'POST', url: '/api/session', payload: { email: `spray-${i}@example.test`, password: 'guess guess guess' }, remoteAddress: address });
    assert.equal(response.statusCode, 401);
  }
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const blocked = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: testPassword }, remoteAddress: address });
  assert.equal(blocked.statusCode, 429);
  await signIn(app, user.email, testPassword, '203.0.113.78');
});

test('a successful sign-in clears the account counter', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  for (let i = 0; i < accountAddressFailureLimit - 1; i++) {
    await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: 'wrong wrong wrong' }, remoteAddress: '192.0.2.90' });
  }
  await signIn(app, user.email, testPassword, '192.0.2.90');
  const again = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: 'wrong wrong wrong' }, remoteAddress: '192.0.2.90' });
  assert.equal(again.statusCode, 401);
  await signIn(app, user.email, testPassword, '192.0.2.90');
});

test('without a session the API answers 401; a forged or expired cookie is no session', async () => {
  const none = await app.inject({ url: '/api/sites' });
  assert.equal(none.statusCode, 401);
  assert.equal(none.json().error.code, 'unauthenticated');
  const forged = await app.inject({ url: '/api/sites', headers: { cookie: `cg_session=${'A'.repeat(43)}` } });
  assert.equal(forged.statusCode, 401);
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const signed = await signIn(app, user.email);
  await db.database.query(`UPDATE admin_session SET last_seen_at = now() - interval '31 minutes' WHERE user_id = $1`, [user.id]);
  assert.equal(await whoIs(signed.cookie), null, 'an idle session has ended');
  const fresh = await signIn(app, user.email);
  await db.database.query(`UPDATE admin_session SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.id]);
  assert.equal(await whoIs(fresh.cookie), null, 'an expired session has ended');
  const anonymous = await app.inject({ url: '/api/session' });
  assert.equal(anonymous.statusCode, 200);
  assert.deepEqual(anonymous.json(), { user: null });
});

test('state-changing requests need the CSRF token and the same origin', async () => {
  const site = await createTestSite(db.database);
  const admin = await createTestUser(db.database, site, 'site-admin');
  const signed = await signIn(app, admin.email);
  const payload = { email: 'csrf-victim@example.test', role: 'clinician' };
  const without = await app.inject({ method: 'POST', url: `/api/sites/${site.siteId}/users`, headers: { cookie: signed.cookie }, payload });
  assert.equal(without.statusCode, 403);
  assert.equal(without.json().error.code, 'csrf');
  const wrong = await app.inject({ method: 'POST', url: `/api/sites/${site.siteId}/users`, headers: { cookie: signed.cookie, 'x-csrf-token': 'x'.repeat(43) }, payload });
  assert.equal(wrong.statusCode, 403);
  const otherSession = await signIn(app, admin.email);
  const swapped = await app.inject({ method: 'POST', url: `/api/sites/${site.siteId}/users`, headers: { cookie: signed.cookie, 'x-csrf-token': otherSession.csrf }, payload });
  assert.equal(swapped.statusCode, 403, 'a token of another session does not work');
  const crossSite = await app.inject(as(signed, { method: 'POST', url: `/api/sites/${site.siteId}/users`, headers: { 'sec-fetch-site': 'cross-site' }, payload }));
  assert.equal(crossSite.statusCode, 403);
  assert.equal(crossSite.json().error.code, 'cross-origin');
  const signOutWithout = await app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: signed.cookie } });
  assert.equal(signOutWithout.statusCode, 403);
  const { rows } = await db.database.query('SELECT count(*)::int AS n FROM app_user WHERE email = $1', [payload.email]);
  assert.equal(rows[0]!.n, 0, 'nothing was created');
  const ok = await app.inject(as(signed, { method: 'POST', url: `/api/sites/${site.siteId}/users`, headers: { origin: 'http://localhost:80', host: 'localhost:80' }, payload }));
  assert.equal(ok.statusCode, 201, ok.body);
});

test('sign-out ends the session', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const signed = await signIn(app, user.email);
  const out = await app.inject(as(signed, { method: 'DELETE', url: '/api/session' }));
  assert.equal(out.statusCode, 204);
  assert.match(String(out.headers['set-cookie']), /^cg_session=; .*Max-Age=0/);
  assert.equal(await whoIs(signed.cookie), null);
  assert.equal((await app.inject({ url: '/api/sites', headers: { cookie: signed.cookie } })).statusCode, 401);
});

test('changing my password needs the current one, checks strength, and ends my other sessions', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const here = await signIn(app, user.email);
  const elsewhere = await signIn(app, user.email);
  const wrongCurrent = await app.inject(as(here, { method: 'PUT', url: '/api/session/password', payload: { current_password: 'nope nope nope', new_password: 'a brand new passphrase' } }));
  assert.equal(wrongCurrent.statusCode, 400);
  assert.deepEqual(wrongCurrent.json().error.fields, [{ field: 'current_password', message: 'the current password is not correct' }]);
  const weak = await app.inject(as(here, { method: 'PUT', url: '/api/session/password', payload: { current_password: testPassword, new_password: 'short' } }));
  assert.equal(weak.statusCode, 400);
  assert.deepEqual(weak.json().error.fields, [{ field: 'new_password', message: 'the password must be at least 12 characters' }]);
  const ok = await app.inject(as(here, { method: 'PUT', url: '/api/session/password', payload: { current_password: testPassword, new_password: 'a brand new passphrase' } }));
  assert.equal(ok.statusCode, 204);
  assert.equal(await whoIs(here.cookie), user.email);
  assert.equal(await whoIs(elsewhere.cookie), null);
  await signIn(app, user.email, 'a brand new passphrase');
  const old = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: testPassword } });
  assert.equal(old.statusCode, 401);
});

test('guessing the current password through a session is limited like sign-in', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const signed = await signIn(app, user.email, testPassword, '192.0.2.120');
  for (let i = 0; i < accountAddressFailureLimit; i++) {
    const guess = await app.inject(as(signed, { method: 'PUT', url: '/api/session/password', payload: { current_password: `guess number ${i}`, new_password: 'a brand new passphrase' }, remoteAddress: '192.0.2.121' }));
    assert.equal(guess.statusCode, 400);
  }
  const blocked = await app.inject(as(signed, { method: 'PUT', url: '/api/session/password', payload: { current_password: testPassword, new_password: 'a brand new passphrase' }, remoteAddress: '192.0.2.121' }));
  assert.equal(blocked.statusCode, 429);
  const signInBlocked = await app.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: testPassword }, remoteAddress: '192.0.2.121' });
  assert.equal(signInBlocked.statusCode, 429, 'the account is blocked for sign-in from that address too');
});

test('a deactivated user\'s session stops working at once', async () => {
  const site = await createTestSite(db.database);
  const user = await createTestUser(db.database, site, 'clinician');
  const signed = await signIn(app, user.email);
  await updateUser(db.database, user.id, { active: false }, { kind: 'operator' });
  assert.equal(await whoIs(signed.cookie), null);
  assert.equal((await app.inject({ url: '/api/sites', headers: { cookie: signed.cookie } })).statusCode, 401);
});

test('under TLS the session cookie is Secure and the origin sends HSTS', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-admin-tls-'));
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
  const tlsApp = await buildTestOrigin(adminSurface, db.database, { CG_TLS_CERT: join(dir, 'cert.pem'), CG_TLS_KEY: join(dir, 'key.pem') });
  try {
    const site = await createTestSite(db.database);
    const user = await createTestUser(db.database, site, 'clinician');
    const response = await tlsApp.inject({ method: 'POST', url: '/api/session', payload: { email: user.email, password: testPassword } });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['set-cookie']), /; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
    assert.match(String(response.headers['strict-transport-security']), /max-age=\d+/);
    const out = await tlsApp.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: String(response.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': response.json().csrf_token } });
    assert.match(String(out.headers['set-cookie']), /Max-Age=0; Secure$/);
  } finally {
    await tlsApp.close();
  }
});
