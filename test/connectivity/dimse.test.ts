import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectivitySurface } from '../../src/connectivity/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function lookup(env: NodeJS.ProcessEnv, headers: Record<string, string>, url = '/connectivity/dimse') {
  const app = await buildTestOrigin(connectivitySurface, db.database, env);
  try {
    return await app.inject({ url, headers });
  } finally {
    await app.close();
  }
}

test('returns the configured public host, port and IP, and never an AE title', async () => {
  const site = await createTestSite(db.database, { aeTitle: 'SITE_AE_SECRET' });
  const key = await createTestApiKey(db.database, site);
  const response = await lookup(
    { CG_DICOM_PUBLIC_HOST: 'pacs.example.org', CG_DICOM_PUBLIC_PORT: '104', CG_DICOM_PUBLIC_IP: '203.0.113.7' },
    { 'x-api-key': key },
  );
  assert.equal(response.statusCode, 200);
  assert.deepEqual(response.json(), { host: 'pacs.example.org', port: 104, ip: '203.0.113.7' });
  assert.doesNotMatch(response.body, /SITE_AE_SECRET|ae/i);
});

test('defaults come from the bind address and the DICOM port; no ip unless configured', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const response = await lookup({ CG_BIND: '127.0.0.1', CG_DICOM_PORT: '11119' }, { 'x-api-key': key });
  assert.equal(response.statusCode, 200);
  assert.deepEqual(response.json(), { host: '127.0.0.1', port: 11119 });
});

test('every site gets the same fleet-wide address', async () => {
  const env = { CG_DICOM_PUBLIC_HOST: 'dicom.example.org' };
  const [a, b] = [await createTestSite(db.database), await createTestSite(db.database)];
  const first = await lookup(env, { 'x-api-key': await createTestApiKey(db.database, a) });
  const second = await lookup(env, { 'x-api-key': await createTestApiKey(db.database, b) });
  assert.deepEqual(first.json(), second.json());
});

test('401 without a valid key; other paths are 404 here', async () => {
  const missing = await lookup({}, {});
  assert.equal(missing.statusCode, 401);
  assert.deepEqual(Object.keys(missing.json().error).sort(), ['code', 'message']);
  assert.equal(missing.json().error.code, 'unauthenticated');
  const bad = await lookup({}, { 'x-api-key': 'not-a-key' });
  assert.equal(bad.statusCode, 401);
  assert.doesNotMatch(bad.body, /host|port/);
  assert.equal((await lookup({}, {}, '/ingest')).statusCode, 404);
  assert.equal((await lookup({}, {}, '/connectivity/hl7')).statusCode, 404);
});
