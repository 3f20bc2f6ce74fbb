// Issue 22 point 1: the reads of a transaction Bundle run inside its database transaction
// (http.html#transaction: DELETE, POST, PUT, then GET/HEAD, all in the transaction).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';

/**
 * Only the test of a failing read needs a short statement budget; the others keep the default, so
 * that a read waiting on the lock below cannot fail on a busy machine while the test looks on.
 */
const searchTimeoutMs = 300;
let db: TestDatabase;
let app: FastifyInstance;
let shortBudgetApp: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(fhirSurface, db.database);
  shortBudgetApp = await buildTestOrigin(fhirSurface, db.database, { CG_SEARCH_TIMEOUT_MS: String(searchTimeoutMs) });
});
after(async () => {
  await app.close();
  await shortBudgetApp.close();
  await db.drop();
});

const bundle = (entry: unknown[]) => ({ resourceType: 'Bundle', type: 'transaction', entry });

async function patients(client: FhirClient, mrn: string): Promise<number> {
  return (await client.request('GET', `/fhir/Patient?identifier=urn:mrn|${mrn}&_summary=count`)).json().total;
}

/**
 * Holds an exclusive lock on the imaging report table from a connection of its own, so that a
 * DiagnosticReport search (and nothing else of these Bundles) waits on it.
 */
async function lockReports(): Promise<{ waiting(): Promise<void>; release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: db.connectionString });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE imaging_report IN ACCESS EXCLUSIVE MODE');
  return {
    async waiting() {
      for (let tries = 0; tries < 400; tries++) {
        const { rows } = await holder.query("SELECT 1 FROM pg_locks WHERE relation = 'imaging_report'::regclass AND NOT granted");
        if (rows.length > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('nothing waited on the lock');
    },
    async release() {
      await holder.query('ROLLBACK');
      await holder.end();
    },
  };
}

test('a read of a transaction runs before its commit, on its connection: the writes are not visible to anyone else while it runs', async () => {
  const client = await fhirClient(app, db.database);
  const lock = await lockReports();
  const posted = client.request('POST', '/fhir', {
    body: bundle([
      { request: { method: 'GET', url: 'DiagnosticReport' } },
      { request: { method: 'GET', url: 'Patient?identifier=urn:mrn|IN-TX-1' } },
      { resource: patientBody('IN-TX-1'), request: { method: 'POST', url: 'Patient' } },
    ]),
  });
  try {
    await lock.waiting();
    assert.equal(await patients(client, 'IN-TX-1'), 0, 'while the reads run, the transaction has not committed');
  } finally {
    await lock.release();
  }
  const response = await posted;
  assert.equal(response.statusCode, 200, response.body);
  const entries = response.json().entry;
  assert.deepEqual(entries.map((entry: { response: { status: string } }) => entry.response.status), ['200 OK', '200 OK', '201 Created']);
  assert.equal(entries[1].resource.total, 1, 'the search saw the create of its own transaction');
  assert.equal(entries[1].resource.entry[0].resource.id, entries[2].resource.id);
  assert.equal(await patients(client, 'IN-TX-1'), 1, 'committed with the answer');
});

test('a read of a transaction whose statement fails fails the whole transaction, naming the entry; nothing is written', async () => {
  const client = await fhirClient(shortBudgetApp, db.database);
  const lock = await lockReports();
  try {
    const response = await client.request('POST', '/fhir', {
      body: bundle([
        { resource: patientBody('IN-TX-2'), request: { method: 'POST', url: 'Patient' } },
        { request: { method: 'GET', url: 'DiagnosticReport?status=final' } },
      ]),
    });
    assert.equal(response.statusCode, 400, response.body);
    const issue = response.json().issue[0];
    assert.equal(issue.code, 'too-costly');
    assert.match(issue.diagnostics, /^entry 1: the request needed more than 0.3 s of database time/);
    assert.deepEqual(issue.expression, ['Bundle.entry[1]']);
  } finally {
    await lock.release();
  }
  assert.equal(await patients(client, 'IN-TX-2'), 0);
});

test('a read and a version of a transaction agree even while others update the same resource', async () => {
  const client = await fhirClient(app, db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('IN-TX-3') })).json();
  const others = Array.from({ length: 10 }, (_, i) =>
    client.request('PUT', `/fhir/Patient/${patient.id}`, { body: { ...patient, meta: undefined, gender: i % 2 ? 'male' : 'female' } }),
  );
  const transactions = Array.from({ length: 10 }, () =>
    client.request('POST', '/fhir', {
      body: bundle([
        { request: { method: 'GET', url: `Patient/${patient.id}` } },
        { resource: { ...patient, meta: undefined, gender: 'other' }, request: { method: 'PUT', url: `Patient/${patient.id}` } },
      ]),
    }),
  );
  for (const response of await Promise.all(others)) assert.equal(response.statusCode, 200, response.body);
  for (const response of await Promise.all(transactions)) {
    assert.equal(response.statusCode, 200, response.body);
    const [read, update] = response.json().entry;
    assert.equal(read.resource.gender, 'other');
    assert.equal(update.response.location, `Patient/${patient.id}/_history/${read.resource.meta.versionId}`, 'the read shows the version the transaction wrote');
  }
});

test('operations and type history in a Bundle: $-paths are refused, Type/_history is the type history', async () => {
  const client = await fhirClient(app, db.database);
  await client.request('POST', '/fhir/Patient', { body: patientBody('IN-TX-4') });
  const refused = await client.request('POST', '/fhir', { headers: { prefer: 'respond-async' }, body: bundle([{ request: { method: 'GET', url: 'Patient/$export' } }]) });
  assert.equal(refused.statusCode, 400, refused.body);
  assert.match(refused.json().issue[0].diagnostics, /^entry 0: .*operations are not offered/);
  const history = await client.request('POST', '/fhir', { body: bundle([{ request: { method: 'GET', url: 'Patient/_history?_count=5' } }]) });
  assert.equal(history.statusCode, 200, history.body);
  assert.equal(history.json().entry[0].resource.type, 'history');
  assert.equal(history.json().entry[0].resource.total, 1);
});
