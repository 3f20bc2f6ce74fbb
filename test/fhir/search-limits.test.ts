import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { fhirClient, type FhirClient } from './fhir-test-origin.ts';

/** Issue 26 point 2: one search cannot exhaust the database for every site. */

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

async function origin(env: NodeJS.ProcessEnv = {}): Promise<FastifyInstance> {
  return buildTestOrigin(fhirSurface, db.database, env);
}

function postSearch(client: FhirClient, type: string, body: string) {
  return client.request('POST', `/fhir/${type}/_search`, { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}

function outcomeCode(body: string): string | undefined {
  return (JSON.parse(body) as { issue?: { code: string }[] }).issue?.[0]?.code;
}

/**
 * Holds an ACCESS EXCLUSIVE lock on the resource table, so every search statement waits on it:
 * a search that is certain to be in flight for as long as the test needs.
 */
async function lockResources(): Promise<{ waiting(n: number): Promise<void>; release(): Promise<void> }> {
  const holder = new pg.Client({ connectionString: db.connectionString });
  await holder.connect();
  await holder.query('BEGIN; LOCK TABLE clinical_resource IN ACCESS EXCLUSIVE MODE');
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await holder.query('ROLLBACK');
    await holder.end();
  };
  const safety = setTimeout(() => void release(), 20_000);
  return {
    async waiting(n) {
      for (let attempt = 0; attempt < 200; attempt++) {
        // Inside a transaction the activity view is a snapshot: take a fresh one each time.
        await holder.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await holder.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if (rows[0]!.n >= n) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`fewer than ${n} statements waiting on the lock`);
    },
    async release() {
      clearTimeout(safety);
      await release();
    },
  };
}

test('a search with more values than the budget is refused before any SQL, as too costly', async () => {
  const app = await origin();
  try {
    const client = await fhirClient(app, db.database);
    const hundred = Array.from({ length: 100 }, (_, i) => `S-${i}`).join(',');
    const response = await postSearch(client, 'Patient', `identifier=${hundred}&name=${hundred}&gender=${hundred}`);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(outcomeCode(response.body), 'too-costly');
    assert.match(response.body, /at most 200 values/);
    // Escaped commas are part of one value (search.html#escaping), so they do not count.
    const escaped = await client.request('GET', `/fhir/Patient?identifier=${encodeURIComponent(Array.from({ length: 250 }, () => 'a').join('\\,'))}`);
    assert.equal(escaped.statusCode, 200, escaped.body);
  } finally {
    await app.close();
  }
});

test('one parameter repeated more often than the limit is refused', async () => {
  const app = await origin();
  try {
    const client = await fhirClient(app, db.database);
    const response = await client.request('GET', `/fhir/Patient?${Array.from({ length: 11 }, (_, i) => `identifier=S-${i}`).join('&')}`);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(outcomeCode(response.body), 'too-costly');
    assert.match(response.body, /identifier is repeated more than 10 times/);
    const tenRepeats = await client.request('GET', `/fhir/Patient?${Array.from({ length: 10 }, (_, i) => `identifier=S-${i}`).join('&')}`);
    assert.equal(tenRepeats.statusCode, 200, tenRepeats.body);
  } finally {
    await app.close();
  }
});

test('a _search body longer than a URL may be is refused with 413', async () => {
  const app = await origin({ CG_SEARCH_MAX_VALUES: '100000' });
  try {
    const client = await fhirClient(app, db.database);
    const response = await postSearch(client, 'Patient', `name=${'a'.repeat(17 * 1024)}`);
    assert.equal(response.statusCode, 413, response.body);
    assert.equal(outcomeCode(response.body), 'too-costly');
  } finally {
    await app.close();
  }
});

test('a search statement running past CG_SEARCH_TIMEOUT_MS is cancelled and answered 400 too-costly', async () => {
  const app = await origin({ CG_SEARCH_TIMEOUT_MS: '300' });
  const lock = await lockResources();
  try {
    const client = await fhirClient(app, db.database);
    const response = await client.request('GET', '/fhir/Patient?identifier=S-1');
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(outcomeCode(response.body), 'too-costly');
    assert.match(response.body, /narrow its criteria/);
  } finally {
    await lock.release();
    await app.close();
  }
});

test('one API key gets at most CG_SEARCH_CONCURRENCY_PER_KEY searches at once; the next is 429 with Retry-After, other keys are served', async () => {
  const app = await origin({ CG_SEARCH_CONCURRENCY_PER_KEY: '2' });
  const client = await fhirClient(app, db.database);
  const other = await fhirClient(app, db.database);
  const lock = await lockResources();
  try {
    const held = [client.request('GET', '/fhir/Patient?identifier=A'), client.request('GET', '/fhir/Patient?identifier=B')];
    await lock.waiting(2);
    const third = await client.request('GET', '/fhir/Patient?identifier=C');
    assert.equal(third.statusCode, 429, third.body);
    assert.equal(third.headers['retry-after'], '1');
    assert.equal(outcomeCode(third.body), 'throttled');
    const otherKey = other.request('GET', '/fhir/Patient?identifier=D');
    await lock.waiting(3);
    await lock.release();
    for (const response of [...(await Promise.all(held)), await otherKey]) assert.equal(response.statusCode, 200, response.body);
    assert.equal((await client.request('GET', '/fhir/Patient?identifier=E')).statusCode, 200);
  } finally {
    await lock.release();
    await app.close();
  }
});

test('searches waiting on the database leave the connections intake needs free', async () => {
  const app = await origin({ CG_SEARCH_CONCURRENCY_PER_KEY: '100' });
  const client = await fhirClient(app, db.database);
  const lock = await lockResources();
  try {
    // More searches than the intake pool has connections (20), all stuck in the database.
    const searches = Array.from({ length: 25 }, (_, i) => client.request('GET', `/fhir/Patient?identifier=S-${i}`));
    await lock.waiting(5);
    const pool = db.database.pool;
    assert.ok(pool.totalCount - pool.idleCount < 5, `searches hold ${pool.totalCount - pool.idleCount} intake connections`);
    // What HL7, DICOM and MPPS intake do first: take a connection of the pool, at once.
    const intake = await Promise.race([
      db.database.query<{ ok: number }>('SELECT 1 AS ok').then(({ rows }) => rows[0]!.ok),
      new Promise<string>((resolve) => setTimeout(() => resolve('no connection within 3 s'), 3_000)),
    ]);
    assert.equal(intake, 1);
    await lock.release();
    for (const response of await Promise.all(searches)) assert.equal(response.statusCode, 200, response.body);
  } finally {
    await lock.release();
    await app.close();
  }
});

test('type and system history and _include run under the same bounds: the per-key limit counts them, the statement timeout cancels them', async () => {
  const app = await origin({ CG_SEARCH_CONCURRENCY_PER_KEY: '1', CG_SEARCH_TIMEOUT_MS: '2000' });
  const client = await fhirClient(app, db.database);
  const lock = await lockResources();
  try {
    const held = client.request('GET', '/fhir/Observation?_include=Observation:patient');
    await lock.waiting(1);
    for (const url of ['/fhir/_history', '/fhir/Patient/_history', '/fhir/Patient?_revinclude=Observation:patient']) {
      const refused = await client.request('GET', url);
      assert.equal(refused.statusCode, 429, `${url}: ${refused.body}`);
    }
    await lock.release();
    assert.equal((await held).statusCode, 200);
  } finally {
    await lock.release();
    await app.close();
  }
  const timed = await origin({ CG_SEARCH_TIMEOUT_MS: '300' });
  const holder = new pg.Client({ connectionString: db.connectionString });
  await holder.connect();
  await holder.query('BEGIN; LOCK TABLE clinical_resource_version IN ACCESS EXCLUSIVE MODE');
  try {
    const timedClient = await fhirClient(timed, db.database);
    for (const url of ['/fhir/_history', '/fhir/Observation/_history?_since=2020-01-01']) {
      const response = await timedClient.request('GET', url);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(outcomeCode(response.body), 'too-costly');
    }
  } finally {
    await holder.query('ROLLBACK');
    await holder.end();
    await timed.close();
  }
});
