import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { getStudy } from '../../src/domain/imaging/worklist.ts';
import { mppsSurface } from '../../src/mpps/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { receivedInstance, uid } from '../domain/imaging/fixtures.ts';

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(mppsSurface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

async function keyForNewSite() {
  const site = await createTestSite(db.database);
  return { site, key: await createTestApiKey(db.database, site) };
}

function post(key: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/ingest',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    payload: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

test('IN PROGRESS creates (201), COMPLETED updates (200), re-sending is idempotent (200), going back is 409', async () => {
  const { key } = await keyForNewSite();
  const step = { sop_instance_uid: uid(), study_uid: uid() };
  const created = await post(key, {
    ...step,
    status: 'IN PROGRESS',
    modality: 'CT',
    station_ae_title: 'CT_ROOM_1',
    started_at: '2026-01-02T10:00:00+01:00',
    procedure_code: { code_value: 'CTHEAD', coding_scheme_designator: 'LOCAL', code_meaning: 'CT head without contrast' },
  });
  assert.equal(created.statusCode, 201);
  const body = created.json();
  assert.equal(body.sop_instance_uid, step.sop_instance_uid);
  assert.equal(body.study_uid, step.study_uid);
  assert.equal(body.status, 'IN PROGRESS');
  assert.equal(body.modality, 'CT');
  assert.equal(body.station_ae_title, 'CT_ROOM_1');
  assert.equal(body.started_at, '2026-01-02T09:00:00.000Z');
  assert.equal(body.ended_at, null);
  assert.deepEqual(body.procedure_code, { code_value: 'CTHEAD', coding_scheme_designator: 'LOCAL', code_meaning: 'CT head without contrast' });
  assert.equal(body.study_indexed, false);
  assert.equal(body.version, 1);

  const same = await post(key, { ...step, status: 'IN PROGRESS' });
  assert.equal(same.statusCode, 200);
  assert.equal(same.json().version, 1);

  const completed = await post(key, { ...step, status: 'COMPLETED', ended_at: '2026-01-02T09:30:00Z' });
  assert.equal(completed.statusCode, 200);
  assert.equal(completed.json().status, 'COMPLETED');
  assert.equal(completed.json().ended_at, '2026-01-02T09:30:00.000Z');
  assert.equal(completed.json().station_ae_title, 'CT_ROOM_1', 'fields left out keep their stored value');

  const resent = await post(key, { ...step, status: 'COMPLETED', ended_at: '2026-01-02T09:30:00Z' });
  assert.equal(resent.statusCode, 200);
  assert.equal(resent.json().version, 2);

  for (const status of ['IN PROGRESS', 'DISCONTINUED']) {
    const refused = await post(key, { ...step, status });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.json().error.code, 'conflict');
    assert.equal(refused.json().error.field, 'status');
    assert.match(refused.json().error.message, /is COMPLETED; it cannot become/);
  }
  const changedFinal = await post(key, { ...step, status: 'COMPLETED', ended_at: '2026-01-02T09:45:00Z' });
  assert.equal(changedFinal.statusCode, 409);
  assert.match(changedFinal.json().error.message, /can no longer change/);
});

test('a step may be created final, and DISCONTINUED is final too', async () => {
  const { key } = await keyForNewSite();
  const step = { sop_instance_uid: uid(), study_uid: uid() };
  assert.equal((await post(key, { ...step, status: 'DISCONTINUED' })).statusCode, 201);
  assert.equal((await post(key, { ...step, status: 'DISCONTINUED' })).statusCode, 200);
  assert.equal((await post(key, { ...step, status: 'COMPLETED' })).statusCode, 409);
  assert.equal((await post(key, { sop_instance_uid: uid(), study_uid: step.study_uid, status: 'COMPLETED' })).statusCode, 201);
});

test('a step cannot move to another study (409 on study_uid)', async () => {
  const { key } = await keyForNewSite();
  const sop = uid();
  await post(key, { sop_instance_uid: sop, study_uid: uid(), status: 'IN PROGRESS' });
  const moved = await post(key, { sop_instance_uid: sop, study_uid: uid(), status: 'COMPLETED' });
  assert.equal(moved.statusCode, 409);
  assert.equal(moved.json().error.field, 'study_uid');
});

test('the step reaches the worklist whether the images arrive before or after it', async () => {
  const { site, key } = await keyForNewSite();
  const before = receivedInstance();
  const stepFirst = await post(key, { sop_instance_uid: uid(), study_uid: before.studyInstanceUid, status: 'IN PROGRESS' });
  assert.equal(stepFirst.json().study_indexed, false);
  await db.database.transaction((tx) => indexInstance(tx, site, before));
  assert.equal((await getStudy(db.database, site, before.studyInstanceUid))?.stepStatus, 'IN PROGRESS');

  const imagesFirst = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, imagesFirst));
  const stepAfter = await post(key, { sop_instance_uid: uid(), study_uid: imagesFirst.studyInstanceUid, status: 'COMPLETED' });
  assert.equal(stepAfter.json().study_indexed, true);
  const study = await getStudy(db.database, site, imagesFirst.studyInstanceUid);
  assert.equal(study?.stepStatus, 'COMPLETED');
  assert.equal(study?.procedureSteps[0]?.source, 'http');
});

test('sites are isolated: the same step UID in another site is another step', async () => {
  const a = await keyForNewSite();
  const b = await keyForNewSite();
  const step = { sop_instance_uid: uid(), study_uid: uid() };
  assert.equal((await post(a.key, { ...step, status: 'COMPLETED' })).statusCode, 201);
  assert.equal((await post(b.key, { ...step, status: 'IN PROGRESS' })).statusCode, 201);
  assert.equal((await post(b.key, { ...step, status: 'DISCONTINUED' })).statusCode, 200);
});

test('401 without a valid key, and nothing is recorded', async () => {
  const { site } = await keyForNewSite();
  const step = { sop_instance_uid: uid(), study_uid: uid(), status: 'IN PROGRESS' };
  const missing = await post(undefined, step);
  assert.equal(missing.statusCode, 401);
  assert.equal(missing.json().error.code, 'unauthenticated');
  const wrong = await post(`cg_${'a'.repeat(12)}_${'b'.repeat(43)}`, step);
  assert.equal(wrong.statusCode, 401);
  const { rows } = await db.database.query('SELECT 1 FROM imaging_procedure_step WHERE site_id = $1', [site.siteId]);
  assert.equal(rows.length, 0);
});

test('400 for each kind of invalid field, naming the field', async () => {
  const { key, site } = await keyForNewSite();
  const valid = { sop_instance_uid: uid(), study_uid: uid(), status: 'IN PROGRESS' };
  const cases: [string, Record<string, unknown>][] = [
    ['sop_instance_uid', { sop_instance_uid: undefined }],
    ['sop_instance_uid', { sop_instance_uid: null }],
    ['sop_instance_uid', { sop_instance_uid: 12345 }],
    ['sop_instance_uid', { sop_instance_uid: '' }],
    ['sop_instance_uid', { sop_instance_uid: '1.2.840.abc' }],
    ['sop_instance_uid', { sop_instance_uid: '1.02.3' }],
    ['sop_instance_uid', { sop_instance_uid: '1..3' }],
    ['sop_instance_uid', { sop_instance_uid: '1.2.3.' }],
    ['sop_instance_uid', { sop_instance_uid: ' 1.2.3' }],
    ['sop_instance_uid', { sop_instance_uid: `1.${'2'.repeat(63)}` }],
    ['study_uid', { study_uid: undefined }],
    ['study_uid', { study_uid: '1.2.3.04' }],
    ['status', { status: undefined }],
    ['status', { status: 'in progress' }],
    ['status', { status: 'DONE' }],
    ['status', { status: 1 }],
    ['modality', { modality: 'C T' }],
    ['modality', { modality: 'X'.repeat(17) }],
    ['modality', { modality: 7 }],
    ['station_ae_title', { station_ae_title: 'A'.repeat(17) }],
    ['station_ae_title', { station_ae_title: '   ' }],
    ['station_ae_title', { station_ae_title: 'BAD\\AE' }],
    ['started_at', { started_at: '2026-01-02T10:00:00' }],
    ['started_at', { started_at: '2026-02-30T10:00:00Z' }],
    ['started_at', { started_at: 'yesterday' }],
    ['started_at', { started_at: 1767348000 }],
    ['ended_at', { ended_at: '2026-01-02T25:00:00Z' }],
    ['ended_at', { started_at: '2026-01-02T10:00:00Z', ended_at: '2026-01-02T09:00:00Z' }],
    ['procedure_code', { procedure_code: '' }],
    ['procedure_code', { procedure_code: 5 }],
    ['procedure_code', { procedure_code: ['A'] }],
    ['procedure_code.code_value', { procedure_code: {} }],
    ['procedure_code.coding_scheme_designator', { procedure_code: { code_value: 'A', coding_scheme_designator: 'S'.repeat(17) } }],
    ['procedure_code.code_meaning', { procedure_code: { code_value: 'A', code_meaning: 3 } }],
    ['procedure_code.extra', { procedure_code: { code_value: 'A', extra: 1 } }],
    ['studyUid', { studyUid: '1.2.3' }],
  ];
  for (const [field, overrides] of cases) {
    const response = await post(key, { ...valid, ...overrides });
    assert.equal(response.statusCode, 400, `${field}: ${JSON.stringify(overrides)}`);
    assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
    const { error } = response.json();
    assert.equal(error.code, 'invalid');
    assert.equal(error.field, field, JSON.stringify(overrides));
    assert.equal(typeof error.message, 'string');
  }
  const { rows } = await db.database.query('SELECT 1 FROM imaging_procedure_step WHERE site_id = $1', [site.siteId]);
  assert.equal(rows.length, 0, 'no invalid request recorded anything');
});

test('400 for bodies that are not a JSON object', async () => {
  const { key } = await keyForNewSite();
  for (const body of ['{"sop_instance_uid": ', '', 'null', '[]', '"text"', '42', '{"__proto__": {"x": 1}}']) {
    const response = await post(key, body);
    assert.equal(response.statusCode, 400, body);
    assert.equal(response.json().error.code, 'invalid', body);
  }
});

test('413 above 64 KiB, 415 for other content types', async () => {
  const { key } = await keyForNewSite();
  const large = await post(key, { sop_instance_uid: uid(), study_uid: uid(), status: 'IN PROGRESS', pad: 'x'.repeat(70_000) });
  assert.equal(large.statusCode, 413);
  assert.equal(large.json().error.code, 'too-large');
  const text = await post(key, 'sop_instance_uid=1.2.3', { 'content-type': 'text/plain' });
  assert.equal(text.statusCode, 415);
  assert.equal(text.json().error.code, 'unsupported-media-type');
  const xml = await post(key, '<step/>', { 'content-type': 'application/xml' });
  assert.equal(xml.statusCode, 415);
});

test('accepts a procedure code given as a plain code value; answers over a real socket', async () => {
  const { key } = await keyForNewSite();
  const server = await buildTestOrigin(mppsSurface, db.database);
  try {
    await server.listen({ port: 0, host: '127.0.0.1' });
    const address = server.server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${address.port}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-api-key': key },
      body: JSON.stringify({ sop_instance_uid: uid(), study_uid: uid(), status: 'IN PROGRESS', procedure_code: 'CTHEAD', modality: 'mr' }),
    });
    assert.equal(response.status, 201);
    const body = (await response.json()) as { procedure_code: unknown; modality: string };
    assert.deepEqual(body.procedure_code, { code_value: 'CTHEAD' });
    assert.equal(body.modality, 'MR');
  } finally {
    await server.close();
  }
});

test('the OpenAPI document describes POST /ingest and nothing of other origins', async () => {
  const response = await app.inject({ url: '/api/documentation/openapi.json' });
  assert.equal(response.statusCode, 200);
  const document = response.json();
  assert.deepEqual(Object.keys(document.paths).filter((path) => !path.startsWith('/healthz') && !path.startsWith('/readyz')), ['/ingest']);
  const operation = document.paths['/ingest'].post;
  assert.deepEqual(operation.requestBody.content['application/json'].schema.required, ['sop_instance_uid', 'study_uid', 'status']);
  assert.ok(operation.responses['201'] && operation.responses['409'] && operation.responses['415']);
});
