import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { surfaceCatalogue } from '../../src/server/surfaces.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';

// The product's real HTTP origins, as the composition root builds them.
const ownPaths: Record<string, RegExp> = {
  fhir: /^\/fhir(\/|$)/,
  hl7: /^\/v[23]\/ingest$/,
  mpps: /^\/ingest$/,
  connectivity: /^\/connectivity\//,
  admin: /^\/api\//,
  dicomweb: /^\/(studies|series|instances)(\/|$)/,
};

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('each origin documents only its own paths, and answers 404 for every other surface\'s paths', async () => {
  const samples: Record<string, string> = { fhir: '/fhir/metadata', hl7: '/v2/ingest', mpps: '/ingest', connectivity: '/connectivity/dimse', admin: '/api/session', dicomweb: '/studies' };
  for (const { surface } of surfaceCatalogue.http) {
    const app = await createOrigin(surface, testServices(db.database));
    try {
      const document = (await app.inject({ url: '/api/documentation/openapi.json' })).json() as { paths: Record<string, unknown>; info: { title: string } };
      const paths = Object.keys(document.paths).filter((path) => path !== '/healthz' && path !== '/readyz');
      assert.ok(paths.length > 0, `${surface.name} documents its routes`);
      for (const path of paths) assert.match(path, ownPaths[surface.name]!, `${surface.name} documents ${path}`);
      for (const [other, path] of Object.entries(samples)) {
        if (other === surface.name) continue;
        const method = other === 'hl7' || other === 'mpps' ? 'POST' : 'GET';
        const response = await app.inject({ method, url: path });
        assert.equal(response.statusCode, 404, `${path} on the ${surface.name} origin`);
      }
    } finally {
      await app.close();
    }
  }
});

test('CG_DOCS=off removes the documentation from every origin', async () => {
  for (const { surface } of surfaceCatalogue.http) {
    const app = await createOrigin(surface, testServices(db.database, { CG_DOCS: 'off' }));
    try {
      assert.equal((await app.inject({ url: '/api/documentation/openapi.json' })).statusCode, 404, surface.name);
      assert.equal((await app.inject({ url: '/api/documentation/' })).statusCode, 404, surface.name);
      assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200, surface.name);
    } finally {
      await app.close();
    }
  }
});
