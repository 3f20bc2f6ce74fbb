import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { connectivitySurface } from '../../src/connectivity/surface.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { mppsSurface } from '../../src/mpps/surface.ts';
import type { HttpSurface } from '../../src/platform/http/surface.ts';
import { hl7Surface } from '../../src/server/hl7-origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, rawHttpExchange } from '../support/http.ts';

// Issue 19 point 8: refusals made before any route runs are in each origin's own format, and
// every 401 of an X-API-Key origin carries a challenge (RFC 9110 section 11.6.1).

interface Origin {
  surface: HttpSurface;
  /** A path of the origin behind X-API-Key, with its method (none for the admin origin). */
  protectedRoute?: { method: 'GET' | 'POST'; url: string };
  /** A path of the origin for the malformed-URL cases. */
  prefix: string;
}

const origins: Origin[] = [
  { surface: fhirSurface, protectedRoute: { method: 'GET', url: '/fhir/Patient' }, prefix: '/fhir' },
  { surface: hl7Surface, protectedRoute: { method: 'POST', url: '/v2/ingest' }, prefix: '/v2' },
  { surface: hl7Surface, protectedRoute: { method: 'POST', url: '/v3/ingest' }, prefix: '/v3' },
  { surface: mppsSurface, protectedRoute: { method: 'POST', url: '/ingest' }, prefix: '/ingest' },
  { surface: connectivitySurface, protectedRoute: { method: 'GET', url: '/connectivity/dimse' }, prefix: '/connectivity' },
  { surface: adminSurface, prefix: '/api' },
];

let db: TestDatabase;
const apps = new Map<HttpSurface, FastifyInstance>();
before(async () => {
  db = await createTestDatabase();
  for (const { surface } of origins) if (!apps.has(surface)) apps.set(surface, await buildTestOrigin(surface, db.database));
});
after(async () => {
  for (const app of apps.values()) await app.close();
  await db.drop();
});

/** What the origin's own renderer makes of a 400, to compare the answers with. */
function ownFormat(surface: HttpSurface, url: string): string {
  return surface.renderError({ statusCode: 400, code: 'invalid', message: 'x', requestId: 'r', url }).contentType;
}

function assertOwnFormat(surface: HttpSurface, url: string, contentType: string, body: string): void {
  assert.equal(contentType, ownFormat(surface, url), `${surface.name} ${url}`);
  assert.doesNotMatch(body, /FST_ERR|"statusCode"|Client Error/, `${surface.name} ${url}`);
}

test('every 401 of an X-API-Key origin carries WWW-Authenticate naming the header', async () => {
  for (const { surface, protectedRoute } of origins) {
    if (!protectedRoute) continue;
    for (const headers of [{}, { 'x-api-key': 'cg_not-a-key' }]) {
      const response: LightMyRequestResponse = await apps.get(surface)!.inject({ method: protectedRoute.method, url: protectedRoute.url, headers });
      assert.equal(response.statusCode, 401, `${surface.name} ${protectedRoute.url}`);
      assert.equal(response.headers['www-authenticate'], 'ApiKey realm="clinical-gateway", header="X-API-Key"', `${surface.name} ${protectedRoute.url}`);
    }
  }
});

test('a path with bad percent-encoding is a 400 in the origin\'s own format', async () => {
  for (const { surface, prefix } of origins) {
    for (const url of [`${prefix}/%ZZ`, `${prefix}/a%E0%A4%A`]) {
      const response = await apps.get(surface)!.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 400, `${surface.name} ${url}`);
      assertOwnFormat(surface, url, String(response.headers['content-type']), response.body);
      assert.match(response.body, /percent-encoded/, `${surface.name} ${url}`);
      assert.ok(response.headers['x-request-id'], `${surface.name} ${url}`);
    }
  }
});

test('a request Node cannot parse (raw UTF-8 in the target, a broken header) is a 400 in the origin\'s own format', async () => {
  for (const surface of apps.keys()) {
    const app = apps.get(surface)!;
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const requests = [
      Buffer.concat([Buffer.from('GET /x?name=M'), Buffer.from('ü', 'utf8'), Buffer.from('ller HTTP/1.1\r\nHost: x\r\n\r\n')]),
      Buffer.from('GET /x HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n'),
    ];
    for (const request of requests) {
      const { head, body } = await rawHttpExchange(port, request);
      assert.match(head, /^HTTP\/1\.1 400 Bad Request/, surface.name);
      assertOwnFormat(surface, '', /content-type: ([^\r]+)/i.exec(head)![1]!, body);
      assert.match(head, /x-request-id: /i, surface.name);
    }
  }
});
