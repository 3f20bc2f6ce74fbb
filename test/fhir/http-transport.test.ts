import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/env.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { buildFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

// Issue 22 point 4: conditional read, HEAD, compression and CORS on the FHIR origin.

let db: TestDatabase;
let app: FastifyInstance;
let corsApp: FastifyInstance;
const appOrigin = 'https://app.example.org';
before(async () => {
  db = await createTestDatabase();
  app = await buildFhirOrigin(db.database);
  corsApp = await buildTestOrigin(fhirSurface, db.database, { CG_FHIR_CORS_ORIGINS: `${appOrigin}, http://localhost:3000` });
});
after(async () => {
  await app.close();
  await corsApp.close();
  await db.drop();
});

test('conditional read: If-None-Match with the current weak ETag, or If-Modified-Since not before lastUpdated, is a 304 without a body', async () => {
  const client = await fhirClient(app, db.database);
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('CR-1') });
  const url = `/fhir/Patient/${created.json().id}`;
  const read = await client.request('GET', url);
  const readBody = read.json() as Record<string, unknown>;
  assert.equal(read.headers.etag, 'W/"1"');
  const lastModified = String(read.headers['last-modified']);

  const fresh: Record<string, string>[] = [{ 'if-none-match': 'W/"1"' }, { 'if-none-match': '"1"' }, { 'if-none-match': 'W/"7", W/"1"' }, { 'if-none-match': '*' }, { 'if-modified-since': lastModified }];
  for (const headers of fresh) {
    const notModified = await client.request('GET', url, { headers });
    assert.equal(notModified.statusCode, 304, JSON.stringify(headers));
    assert.equal(notModified.body, '');
    assert.equal(notModified.headers.etag, 'W/"1"');
    assert.equal(notModified.headers['last-modified'], lastModified);
  }
  const later = new Date(Date.parse(lastModified) + 60_000).toUTCString();
  assert.equal((await client.request('GET', url, { headers: { 'if-modified-since': later } })).statusCode, 304);

  // The client's copy is stale, or the headers say nothing usable: the resource.
  const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
  const stale: Record<string, string>[] = [{ 'if-none-match': 'W/"2"' }, { 'if-modified-since': earlier }, { 'if-modified-since': 'yesterday' }, { 'if-none-match': 'W/"2"', 'if-modified-since': later }];
  for (const headers of stale) {
    const full = await client.request('GET', url, { headers });
    assert.equal(full.statusCode, 200, JSON.stringify(headers));
    assert.equal(full.json().id, created.json().id);
  }
  // After an update the old ETag no longer matches.
  await client.request('PUT', url, { body: { ...readBody, gender: 'female' } });
  const updated = await client.request('GET', url, { headers: { 'if-none-match': 'W/"1"' } });
  assert.equal(updated.statusCode, 200);
  assert.equal(updated.headers.etag, 'W/"2"');
  // vread is conditional too.
  assert.equal((await client.request('GET', `${url}/_history/1`, { headers: { 'if-none-match': 'W/"1"' } })).statusCode, 304);
});

test('conditional read stays inside the key\'s site: another site\'s resource is a 404, whatever the validators', async () => {
  const owner = await fhirClient(app, db.database);
  const stranger = await fhirClient(app, db.database);
  const created = await owner.request('POST', '/fhir/Patient', { body: patientBody('CR-2') });
  const response = await stranger.request('GET', `/fhir/Patient/${created.json().id}`, { headers: { 'if-none-match': '*' } });
  assert.equal(response.statusCode, 404);
  assert.equal(response.json().resourceType, 'OperationOutcome');
});

test('HEAD answers a read and a search with the GET\'s status and headers and no body', async () => {
  const client = await fhirClient(app, db.database);
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('HD-1') });
  const url = `/fhir/Patient/${created.json().id}`;
  const get = await client.request('GET', url);
  const head = await client.request('HEAD', url);
  assert.equal(head.statusCode, 200);
  assert.equal(head.body, '');
  assert.equal(head.headers.etag, get.headers.etag);
  assert.equal(head.headers['last-modified'], get.headers['last-modified']);
  assert.match(String(head.headers['content-type']), /^application\/fhir\+json/);
  const search = await client.request('HEAD', '/fhir/Patient?identifier=HD-1');
  assert.equal(search.statusCode, 200);
  assert.equal(search.body, '');
  assert.equal((await client.request('HEAD', '/fhir/Patient/00000000-0000-4000-8000-000000000001')).statusCode, 404);
  const unauthenticated = await app.inject({ method: 'HEAD', url });
  assert.equal(unauthenticated.statusCode, 401);
  assert.equal(unauthenticated.body, '');
});

test('responses are compressed with br or gzip as Accept-Encoding asks, and sent as is without it', async () => {
  const client = await fhirClient(app, db.database);
  for (let index = 0; index < 8; index += 1) await client.request('POST', '/fhir/Patient', { body: patientBody(`CZ-${index}`) });
  const plain = await client.request('GET', '/fhir/Patient?_count=20');
  assert.equal(plain.statusCode, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.rawPayload.length > 1024, 'the page is larger than the compression threshold');
  const expected = plain.json();
  const decoders = { gzip: gunzipSync, br: brotliDecompressSync } as const;
  for (const [acceptEncoding, encoding] of [['gzip', 'gzip'], ['br', 'br'], ['gzip, deflate, br', 'br'], ['br;q=0.5, gzip', 'gzip']] as const) {
    const response = await client.request('GET', '/fhir/Patient?_count=20', { headers: { 'accept-encoding': acceptEncoding } });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-encoding'], encoding, acceptEncoding);
    assert.match(String(response.headers.vary), /accept-encoding/i);
    assert.ok(response.rawPayload.length < plain.rawPayload.length / 2, `${encoding}: ${response.rawPayload.length} of ${plain.rawPayload.length} bytes`);
    const body = JSON.parse(decoders[encoding](response.rawPayload).toString('utf8'));
    assert.deepEqual(body, expected);
  }
  const identity = await client.request('GET', '/fhir/Patient?_count=20', { headers: { 'accept-encoding': 'identity' } });
  assert.equal(identity.headers['content-encoding'], undefined);
});

test('a compressed request body is inflated; an unknown or corrupt encoding is a clear OperationOutcome', async () => {
  const client = await fhirClient(app, db.database);
  const compressed = await app.inject({
    method: 'POST',
    url: '/fhir/Patient',
    headers: { 'x-api-key': client.key, 'content-type': 'application/fhir+json', 'content-encoding': 'gzip' },
    payload: gzipSync(JSON.stringify(patientBody('CZ-IN'))),
  });
  assert.equal(compressed.statusCode, 201, compressed.body);
  for (const [encoding, payload, status] of [['compress', 'xxxx', 415], ['gzip', 'not gzip at all', 400]] as const) {
    const refused = await app.inject({
      method: 'POST',
      url: '/fhir/Patient',
      headers: { 'x-api-key': client.key, 'content-type': 'application/fhir+json', 'content-encoding': encoding },
      payload,
    });
    assert.equal(refused.statusCode, status, encoding);
    assert.equal(refused.json().resourceType, 'OperationOutcome');
  }
  // The body limit bounds the inflated size: 20 MiB of spaces gzip to about 20 KiB.
  const inflated = JSON.stringify(patientBody('CZ-BOMB', { text: { status: 'generated', div: `<div xmlns="http://www.w3.org/1999/xhtml">${' '.repeat(20 * 1024 * 1024)}</div>` } }));
  const bomb = await app.inject({
    method: 'POST',
    url: '/fhir/Patient',
    headers: { 'x-api-key': client.key, 'content-type': 'application/fhir+json', 'content-encoding': 'gzip' },
    payload: gzipSync(inflated),
  });
  assert.equal(bomb.statusCode, 413);
  assert.equal(bomb.json().resourceType, 'OperationOutcome');
});

test('CORS is off by default: no CORS headers, and a preflight is not answered', async () => {
  const client = await fhirClient(app, db.database);
  const read = await client.request('GET', '/fhir/metadata', { headers: { origin: appOrigin } });
  assert.equal(read.headers['access-control-allow-origin'], undefined);
  assert.equal(read.json().rest[0].security.cors, false);
  const preflight = await app.inject({ method: 'OPTIONS', url: '/fhir/Patient', headers: { origin: appOrigin, 'access-control-request-method': 'GET' } });
  assert.notEqual(preflight.statusCode, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], undefined);
});

test('CORS on for the configured origins: preflight and answers allow them, never another origin, never credentials', async () => {
  const client = await fhirClient(corsApp, db.database);
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('CO-1') });
  const preflight = await corsApp.inject({
    method: 'OPTIONS',
    url: `/fhir/Patient/${created.json().id}`,
    headers: { origin: appOrigin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-api-key, content-type, if-match' },
  });
  assert.equal(preflight.statusCode, 204);
  assert.equal(preflight.headers['access-control-allow-origin'], appOrigin);
  assert.match(String(preflight.headers['access-control-allow-methods']), /PUT/);
  assert.match(String(preflight.headers['access-control-allow-headers']), /x-api-key/);
  assert.equal(preflight.headers['access-control-allow-credentials'], undefined);

  const read = await client.request('GET', `/fhir/Patient/${created.json().id}`, { headers: { origin: appOrigin } });
  assert.equal(read.statusCode, 200);
  assert.equal(read.headers['access-control-allow-origin'], appOrigin);
  assert.match(String(read.headers['access-control-expose-headers']), /etag/i);
  assert.equal(read.headers['access-control-allow-credentials'], undefined);
  assert.match(String(read.headers.vary), /origin/i);
  assert.equal(read.json().id, created.json().id);
  assert.equal((await client.request('GET', '/fhir/metadata')).json().rest[0].security.cors, true);

  for (const origin of ['https://evil.example.org', 'https://app.example.org.evil.example', 'null']) {
    const refused = await corsApp.inject({ method: 'OPTIONS', url: '/fhir/Patient', headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' } });
    assert.notEqual(refused.statusCode, 204, origin);
    assert.equal(refused.headers['access-control-allow-origin'], undefined, origin);
    assert.equal(refused.headers['access-control-allow-credentials'], undefined, origin);
    const answered = await client.request('GET', '/fhir/metadata', { headers: { origin } });
    assert.equal(answered.headers['access-control-allow-origin'], undefined, origin);
  }
});

test('CG_FHIR_CORS_ORIGINS takes origins or *, and refuses anything else', () => {
  assert.deepEqual(loadConfig({}).fhirCorsOrigins, []);
  assert.deepEqual(loadConfig({ CG_FHIR_CORS_ORIGINS: 'https://a.example, http://localhost:3000' }).fhirCorsOrigins, ['https://a.example', 'http://localhost:3000']);
  assert.deepEqual(loadConfig({ CG_FHIR_CORS_ORIGINS: '*' }).fhirCorsOrigins, ['*']);
  for (const bad of ['https://a.example/', 'https://a.example/app', 'a.example', 'ftp://a.example']) {
    assert.throws(() => loadConfig({ CG_FHIR_CORS_ORIGINS: bad }), /CG_FHIR_CORS_ORIGINS/, bad);
  }
});
