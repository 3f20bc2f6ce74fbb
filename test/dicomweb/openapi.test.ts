// The DICOMweb origin's OpenAPI document declares both credentials it accepts: X-API-Key
// everywhere, and the admin app's viewing token (bearer) on the reads only; STOW-RS needs a key.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { dicomwebSurface } from '../../src/dicomweb/surface.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

type Operation = { security?: Record<string, string[]>[] };

test('the document declares X-API-Key and the viewing token; reads take either, STOW-RS only a key, health checks none', async () => {
  const app = await createOrigin(dicomwebSurface, testServices(db.database));
  try {
    const response = await app.inject({ url: '/api/documentation/openapi.json' });
    assert.equal(response.statusCode, 200);
    const document = response.json() as { security: unknown; components: { securitySchemes: Record<string, Record<string, string>> }; paths: Record<string, Record<string, Operation>> };
    const { apiKey, viewingToken } = document.components.securitySchemes;
    assert.deepEqual({ type: apiKey!.type, in: apiKey!.in, name: apiKey!.name }, { type: 'apiKey', in: 'header', name: 'X-API-Key' });
    assert.deepEqual({ type: viewingToken!.type, scheme: viewingToken!.scheme }, { type: 'http', scheme: 'bearer' });
    assert.match(viewingToken!.description!, /reading only/);
    assert.deepEqual(document.security, [{ apiKey: [] }]);

    const either = [{ apiKey: [] }, { viewingToken: [] }];
    const keyOnly = [{ apiKey: [] }];
    let reads = 0;
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (path === '/healthz' || path === '/readyz') {
          assert.deepEqual(operation.security, [], path);
        } else if (method === 'get' || method === 'head') {
          assert.deepEqual(operation.security, either, `${method} ${path}`);
          reads += 1;
        } else {
          assert.deepEqual(operation.security, keyOnly, `${method} ${path}`);
        }
      }
    }
    assert.ok(reads >= 5, `${reads} read operations documented`);
    assert.deepEqual(document.paths['/studies']!.post!.security, keyOnly, 'STOW-RS');
    assert.deepEqual(document.paths['/studies/{study}']!.post!.security, keyOnly, 'STOW-RS to a study');
    assert.deepEqual(document.paths['/studies']!.get!.security, either, 'QIDO-RS');
  } finally {
    await app.close();
  }
});
