import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { Database } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';

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

test('the web app is served by the origin itself, with a strict content security policy', async () => {
  const index = await app.inject({ url: '/' });
  assert.equal(index.statusCode, 200);
  assert.match(String(index.headers['content-type']), /^text\/html/);
  assert.match(index.body, /<script type="module" src="\/assets\/js\/main.js"><\/script>/);
  assert.doesNotMatch(index.body, /https?:\/\//, 'no asset from another host');
  const csp = String(index.headers['content-security-policy']);
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/, 'scripts from this origin only; WebAssembly compilation for the image decoders, no eval');
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(index.headers['x-content-type-options'], 'nosniff');
  const script = await app.inject({ url: '/assets/js/main.js' });
  assert.equal(script.statusCode, 200);
  assert.match(String(script.headers['content-type']), /^text\/javascript/);
  const etag = String(script.headers.etag);
  const revalidated = await app.inject({ url: '/assets/js/main.js', headers: { 'if-none-match': etag } });
  assert.equal(revalidated.statusCode, 304);
  assert.equal((await app.inject({ url: '/assets/app.css' })).statusCode, 200);
});

test('only the app\'s own files are served: no traversal, no unknown paths', async () => {
  for (const url of ['/assets/../package.json', '/assets/%2e%2e/package.json', '/assets/..%2fpackage.json', '/assets/js/nope.js', '/assets/', '/package.json', '/fhir/metadata', '/v2/ingest']) {
    const response = await app.inject({ url });
    assert.equal(response.statusCode, 404, url);
    assert.doesNotMatch(response.body, /"name": "clinical-gateway"/);
  }
});

test('API errors are JSON without internals, and API answers are not cached', async () => {
  const response = await app.inject({ url: '/api/sites' });
  assert.equal(response.statusCode, 401);
  assert.equal(response.headers['cache-control'], 'no-store');
  assert.deepEqual(Object.keys(response.json().error).sort(), ['code', 'message']);
  const unknown = await app.inject({ url: '/api/nothing-here' });
  assert.equal(unknown.statusCode, 404);
  assert.equal(unknown.json().error.code, 'not-found');
});

test('an oversized body is refused with 413 before anything is read into the domain', async () => {
  const response = await app.inject({ method: 'POST', url: '/api/session', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(2 * 1024 * 1024) }) });
  assert.equal(response.statusCode, 413);
  assert.equal(response.json().error.code, 'too-large');
});

test('the OpenAPI document describes the admin API and only it', async () => {
  const response = await app.inject({ url: '/api/documentation/openapi.json' });
  assert.equal(response.statusCode, 200);
  const document = response.json();
  const paths = Object.keys(document.paths);
  for (const path of ['/api/session', '/api/sites', '/api/sites/{siteId}/keys', '/api/sites/{siteId}/keys/{keyId}/revoke', '/api/sites/{siteId}/clients/{clientId}', '/api/sites/{siteId}/studies', '/api/sites/{siteId}/reports/{reportId}/complete', '/api/sites/{siteId}/messages/{messageId}', '/api/sites/{siteId}/connectivity', '/api/audit']) {
    assert.ok(paths.includes(path), `${path} is documented`);
  }
  assert.ok(paths.every((path) => path.startsWith('/api/') || path === '/healthz' || path === '/readyz'), paths.join(', '));
  assert.equal(document.paths['/api/sites'].post.summary, 'Create a site (service admin)');
  assert.deepEqual(document.paths['/api/session'].post.security, []);
  // Either a session or a service administrator's automation token (Authorization: Bearer).
  assert.deepEqual(document.security, [{ session: [] }, { automationToken: [] }]);
  assert.deepEqual([document.components.securitySchemes.automationToken.type, document.components.securitySchemes.automationToken.scheme], ['http', 'bearer']);
  assert.ok(paths.includes('/api/automation-tokens/{tokenId}/revoke'));
  assert.deepEqual(document.paths['/api/automation-tokens'].post.security, [{ session: [] }], 'a token does not manage tokens');
});

test('an unreachable database is "retry later" (503), never a refusal of the credentials', async () => {
  const down = new Database({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
  const offline = await buildTestOrigin(adminSurface, down);
  try {
    const signIn = await offline.inject({ method: 'POST', url: '/api/session', payload: { email: 'a@example.test', password: 'whatever password' } });
    assert.equal(signIn.statusCode, 503);
    assert.equal(signIn.json().error.code, 'unavailable');
    assert.ok(signIn.json().error.request_id);
    assert.equal(signIn.headers['retry-after'], '5');
    const api = await offline.inject({ url: '/api/sites', headers: { cookie: `cg_session=${'a'.repeat(43)}` } });
    assert.equal(api.statusCode, 503);
  } finally {
    await offline.close();
    await down.close();
  }
});
