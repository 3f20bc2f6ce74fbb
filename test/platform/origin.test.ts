import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../src/domain/errors.ts';
import { revokeApiKey } from '../../src/domain/keys/api-keys.ts';
import { renderJsonError, type HttpSurface } from '../../src/platform/http/surface.ts';
import { siteContextOf } from '../../src/platform/http/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';

const execFileAsync = promisify(execFile);

// A minimal surface exercising the platform: what every real surface gets around its routes.
const probeSurface: HttpSurface = {
  name: 'connectivity',
  title: 'Probe',
  description: 'platform test surface',
  auth: 'api-key',
  renderError: renderJsonError,
  async register(app) {
    app.get('/probe/whoami', { schema: { summary: 'who am I', response: { 200: { type: 'object', properties: { site: { type: 'string' } } } } } }, async (request) => ({
      site: siteContextOf(request).siteId,
    }));
    app.post('/probe/echo', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } } }, async (request) => request.body);
    app.get('/probe/refuse', async () => {
      throw new DomainError('conflict', 'already there');
    });
    app.get('/probe/crash', async () => {
      throw new Error('secret internal detail');
    });
  },
};

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(probeSurface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

test('a valid key resolves the caller site; revocation takes effect on the next request', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const ok = await app.inject({ url: '/probe/whoami', headers: { 'x-api-key': key } });
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json(), { site: site.siteId });
  const { rows } = await db.database.query<{ id: string }>('SELECT id FROM api_key WHERE site_id = $1', [site.siteId]);
  // last_used_at is written behind the request, at most once a minute.
  let lastUsed: Date | null = null;
  for (let attempt = 0; attempt < 50 && lastUsed === null; attempt++) {
    lastUsed = (await db.database.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_key WHERE id = $1', [rows[0]!.id])).rows[0]!.last_used_at;
    if (lastUsed === null) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(lastUsed instanceof Date, 'last_used_at is recorded');
  await revokeApiKey(db.database, rows[0]!.id, { kind: 'operator' });
  const revoked = await app.inject({ url: '/probe/whoami', headers: { 'x-api-key': key } });
  assert.equal(revoked.statusCode, 401);
  assert.deepEqual(revoked.json(), { error: { code: 'unauthenticated', message: 'the API key has been revoked' } });
});

test('missing, malformed and unknown keys are 401 with distinct messages', async () => {
  const missing = await app.inject({ url: '/probe/whoami' });
  assert.equal(missing.statusCode, 401);
  assert.match(missing.json().error.message, /X-API-Key header is required/);
  const malformed = await app.inject({ url: '/probe/whoami', headers: { 'x-api-key': 'hello' } });
  assert.equal(malformed.statusCode, 401);
  assert.match(malformed.json().error.message, /not a Clinical Gateway API key/);
  const unknown = await app.inject({ url: '/probe/whoami', headers: { 'x-api-key': `cg_${'a'.repeat(12)}_${'b'.repeat(43)}` } });
  assert.equal(unknown.statusCode, 401);
  assert.equal(unknown.json().error.message, 'the API key is not valid');
});

test('unknown paths are 404 without credentials; health and readiness need none', async () => {
  const notFound = await app.inject({ url: '/fhir/metadata' });
  assert.equal(notFound.statusCode, 404);
  assert.equal(notFound.json().error.code, 'not-found');
  assert.deepEqual((await app.inject({ url: '/healthz' })).json(), { status: 'ok' });
  const ready = await app.inject({ url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  assert.deepEqual(ready.json(), { status: 'ready' });
});

test('errors: schema validation 400, bad JSON 400, wrong content type 415, oversized 413, domain 409, internal 500 without details', async () => {
  const site = await createTestSite(db.database);
  const headers = { 'x-api-key': await createTestApiKey(db.database, site) };
  const invalid = await app.inject({ method: 'POST', url: '/probe/echo', headers, payload: { n: 'x' } });
  assert.equal(invalid.statusCode, 400);
  assert.equal(invalid.json().error.code, 'invalid');
  const badJson = await app.inject({ method: 'POST', url: '/probe/echo', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"n":' });
  assert.equal(badJson.statusCode, 400);
  const wrongType = await app.inject({ method: 'POST', url: '/probe/echo', headers: { ...headers, 'content-type': 'application/x-unknown' }, payload: 'n=1' });
  assert.equal(wrongType.statusCode, 415);
  const huge = await app.inject({ method: 'POST', url: '/probe/echo', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify({ n: 1, pad: 'x'.repeat(1_100_000) }) });
  assert.equal(huge.statusCode, 413);
  const conflict = await app.inject({ url: '/probe/refuse', headers });
  assert.equal(conflict.statusCode, 409);
  const crash = await app.inject({ url: '/probe/crash', headers });
  assert.equal(crash.statusCode, 500);
  assert.doesNotMatch(crash.body, /secret internal detail|at .*\.ts/);
  assert.equal(crash.json().error.request_id, crash.headers['x-request-id']);
});

test('the OpenAPI document lists this origin\'s routes only and needs no key', async () => {
  const response = await app.inject({ url: '/api/documentation/openapi.json' });
  assert.equal(response.statusCode, 200);
  const document = response.json();
  assert.match(document.openapi, /^3\./);
  assert.ok(document.paths['/probe/whoami']);
  assert.ok(document.paths['/healthz']);
  assert.equal(Object.keys(document.paths).some((path) => path.startsWith('/fhir') || path.startsWith('/api/documentation')), false);
  const { description, ...scheme } = document.components.securitySchemes.apiKey;
  assert.deepEqual(scheme, { type: 'apiKey', in: 'header', name: 'X-API-Key' });
  assert.match(description, /401 with WWW-Authenticate: ApiKey realm="clinical-gateway", header="X-API-Key"/);
  const ui = await app.inject({ url: '/api/documentation/' });
  assert.equal(ui.statusCode, 200);
  assert.match(ui.body, /swagger-ui/i);
});

test('the database being down is a 503 with Retry-After, and readiness says not-ready', async () => {
  const { Database } = await import('../../src/storage/database.ts');
  const unreachable = new Database({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
  const down = await buildTestOrigin(probeSurface, unreachable);
  try {
    const response = await down.inject({ url: '/probe/whoami', headers: { 'x-api-key': `cg_${'a'.repeat(12)}_${'b'.repeat(43)}` } });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '5');
    assert.equal((await down.inject({ url: '/readyz' })).statusCode, 503);
  } finally {
    await down.close();
    await unreachable.close();
  }
});

/**
 * A refusal sent before the body is read (over the limit, or no valid key) used to close the
 * socket with the body still arriving; the kernel then resets the connection and a client that is
 * still writing never sees the answer (write EPIPE). The client runs in its own process, as real
 * ones do (in one event loop the race never shows), and repeats, because it is a race.
 */
test('over a real socket, a client still sending an oversized or unauthenticated body receives the 413 or 401', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const served = await buildTestOrigin(probeSurface, db.database);
  try {
    await served.listen({ port: 0, host: '127.0.0.1' });
    const port = (served.server.address() as AddressInfo).port;
    const outcomes = await postOversizedBodies(port, key, 40);
    assert.deepEqual(outcomes, Array.from({ length: 40 }, (_, attempt) => (attempt % 4 === 3 ? '401' : '413')));
  } finally {
    await served.close();
  }
});

const oversizedPoster = `
import { request } from 'node:http';
const [port, key, attempts] = process.argv.slice(1);
const body = Buffer.from(JSON.stringify({ n: 1, pad: 'x'.repeat(5 * 1024 * 1024) }));
const outcomes = [];
for (let attempt = 0; attempt < Number(attempts); attempt++) {
  const headers = { connection: 'close', 'content-type': 'application/json', 'content-length': String(body.length), ...(attempt % 4 === 3 ? {} : { 'x-api-key': key }) };
  outcomes.push(await new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: Number(port), method: 'POST', path: '/probe/echo', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', (error) => resolve('response error: ' + error.message));
    });
    req.on('error', (error) => resolve('no answer: ' + error.message));
    req.end(body);
  }));
}
process.stdout.write(JSON.stringify(outcomes));
`;

async function postOversizedBodies(port: number, key: string, attempts: number): Promise<string[]> {
  const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', oversizedPoster, String(port), key, String(attempts)], { maxBuffer: 1024 * 1024 });
  return JSON.parse(stdout) as string[];
}
