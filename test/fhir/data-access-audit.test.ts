// Issue 26 point 14: every FHIR read, vread, history and search is in the data access log, with
// the key, its owner, the caller's address, the site, the resources and their patients.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { pino } from 'pino';
import { dataAccessRecorder, gatherMs, maxWaitingRecords } from '../../src/domain/audit/data-access.ts';
import { listDataAccess } from '../../src/domain/audit/data-access-log.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { fhirClient, patientBody } from './fhir-test-origin.ts';

let db: TestDatabase;
let app: FastifyInstance;
const logLines: string[] = [];
before(async () => {
  db = await createTestDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  app = await createOrigin(fhirSurface, { ...testServices(db.database), logger: pino({ level: 'error' }, sink) });
});
after(async () => {
  await app.close();
  await db.drop();
});

const settled = () => dataAccessRecorder(db.database).settled();

async function keyIdentity(siteId: string): Promise<{ keyId: string; userId: string }> {
  const { rows } = await db.database.query<{ id: string; user_id: string }>('SELECT id, user_id FROM api_key WHERE site_id = $1', [siteId]);
  return { keyId: rows[0]!.id, userId: rows[0]!.user_id };
}

test('read, vread, history and search are recorded with the key, its owner, the address, the resources and their patients', async () => {
  const client = await fhirClient(app, db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('AUD-1') })).json();
  const observation = (await client.request('POST', '/fhir/Observation', {
    body: { resourceType: 'Observation', status: 'final', code: { text: 'Heart rate' }, subject: { reference: `Patient/${patient.id}` }, valueQuantity: { value: 72, unit: '/min' } },
  })).json();
  await settled();
  const before = (await listDataAccess(db.database, client.site.siteId)).entries.length;
  assert.equal(before, 0, 'creating is not a read');

  assert.equal((await client.request('GET', `/fhir/Patient/${patient.id}`)).statusCode, 200);
  assert.equal((await client.request('GET', `/fhir/Observation/${observation.id}/_history/1`)).statusCode, 200);
  assert.equal((await client.request('GET', `/fhir/Observation/${observation.id}/_history`)).statusCode, 200);
  assert.equal((await client.request('GET', `/fhir/Observation?patient=Patient/${patient.id}`)).statusCode, 200);
  assert.equal((await client.request('GET', '/fhir/Patient/not-there')).statusCode, 404);
  await settled();

  const { keyId, userId } = await keyIdentity(client.site.siteId);
  const { entries } = await listDataAccess(db.database, client.site.siteId);
  assert.deepEqual(
    entries.map((entry) => [entry.interaction, entry.resourceType, entry.resourceIds, entry.patientIds]).reverse(),
    [
      ['read', 'Patient', [`Patient/${patient.id}`], [patient.id]],
      ['vread', 'Observation', [`Observation/${observation.id}/_history/1`], [patient.id]],
      ['history', 'Observation', [`Observation/${observation.id}/_history/1`], [patient.id]],
      ['search', 'Observation', [`Observation/${observation.id}`], [patient.id]],
    ],
  );
  for (const entry of entries) {
    assert.equal(entry.keyId, keyId);
    assert.equal(entry.userId, userId);
    assert.equal(entry.surface, 'fhir');
    assert.equal(entry.remoteAddress, '127.0.0.1');
  }
  assert.match(entries[0]!.query!, /patient=Patient%2F/);
  // Filters: by patient, by key, by time.
  assert.equal((await listDataAccess(db.database, client.site.siteId, { patientId: patient.id })).entries.length, 4);
  assert.equal((await listDataAccess(db.database, client.site.siteId, { patientId: 'someone-else' })).entries.length, 0);
  assert.equal((await listDataAccess(db.database, client.site.siteId, { keyId })).entries.length, 4);
  assert.equal((await listDataAccess(db.database, client.site.siteId, { since: new Date(Date.now() + 60_000) })).entries.length, 0);
});

test('a search records the ids it returned, bounded, and their number; another site\'s log does not see it', async () => {
  const client = await fhirClient(app, db.database);
  const other = await fhirClient(app, db.database);
  for (let i = 0; i < 3; i++) assert.equal((await client.request('POST', '/fhir/Patient', { body: patientBody(`AUD-S-${i}`) })).statusCode, 201);
  const bundle = (await client.request('GET', '/fhir/Patient?_count=2')).json();
  await settled();
  const [entry] = (await listDataAccess(db.database, client.site.siteId)).entries;
  assert.equal(entry!.interaction, 'search');
  assert.equal(entry!.resourceCount, 2);
  assert.deepEqual(entry!.resourceIds, bundle.entry.map((e: { resource: { id: string } }) => `Patient/${e.resource.id}`));
  assert.deepEqual((await listDataAccess(db.database, other.site.siteId)).entries, []);
});

test('records made together leave in one INSERT, written within the gathering time without being asked', async () => {
  const client = await fhirClient(app, db.database);
  const recorder = dataAccessRecorder(db.database);
  const record = { siteId: client.site.siteId, occurredAt: new Date(), userId: null, keyId: null, remoteAddress: null, surface: 'fhir' as const, interaction: 'read' as const, resourceType: 'Patient', resourceIds: [], patientIds: [] };
  for (let i = 0; i < 5; i++) recorder.record(record, { error() {} });
  const deadline = Date.now() + 10_000;
  const written = async () =>
    (await db.database.query<{ rows: number; inserts: number }>('SELECT count(*)::int AS rows, count(DISTINCT xmin::text)::int AS inserts FROM data_access_audit WHERE site_id = $1', [client.site.siteId])).rows[0]!;
  while ((await written()).rows < 5 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, gatherMs));
  // One transaction id: one INSERT for the five.
  assert.deepEqual(await written(), { rows: 5, inserts: 1 });
});

test('when the log cannot be written the answer still goes out, and the access is written to the process log', async () => {
  const client = await fhirClient(app, db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('AUD-F-1') })).json();
  await db.database.query('ALTER TABLE data_access_audit ADD CONSTRAINT refuse_all CHECK (false) NOT VALID');
  try {
    const read = await client.request('GET', `/fhir/Patient/${patient.id}`);
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().id, patient.id);
    await settled();
  } finally {
    await db.database.query('ALTER TABLE data_access_audit DROP CONSTRAINT refuse_all');
  }
  const line = logLines.map((text) => JSON.parse(text) as { msg: string; dataAccess?: { resource_ids: string[]; key_id: string } }).find((entry) => entry.dataAccess?.resource_ids[0] === `Patient/${patient.id}`);
  assert.ok(line, 'the failed record is in the process log');
  assert.match(line.msg, /data access log write failed/);
  assert.equal(line.dataAccess!.key_id, (await keyIdentity(client.site.siteId)).keyId);
});

test('past the bound of records waiting to be written, reads fail closed with 503 until the backlog drains', async () => {
  const client = await fhirClient(app, db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('AUD-B-1') })).json();
  // Another session holds the table: writes wait, records pile up.
  const blocker = new pg.Client({ connectionString: db.connectionString });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query('LOCK TABLE data_access_audit IN ACCESS EXCLUSIVE MODE');
  try {
    const recorder = dataAccessRecorder(db.database);
    const quiet = { error() {} };
    const filler = { siteId: client.site.siteId, occurredAt: new Date(), userId: null, keyId: null, remoteAddress: null, surface: 'fhir' as const, interaction: 'read' as const, resourceType: 'Patient', resourceIds: [], patientIds: [] };
    for (let i = 0; i < maxWaitingRecords; i++) recorder.record(filler, quiet);
    const refused = await client.request('GET', `/fhir/Patient/${patient.id}`);
    assert.equal(refused.statusCode, 503);
    assert.equal(refused.json().resourceType, 'OperationOutcome');
    assert.doesNotMatch(refused.body, /AUD-B-1/, 'no clinical data in the refusal');
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }
  await settled();
  assert.equal((await client.request('GET', `/fhir/Patient/${patient.id}`)).statusCode, 200);
});
