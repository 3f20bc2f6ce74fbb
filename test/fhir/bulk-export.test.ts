import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { cleanUpExports } from '../../src/domain/bulk-export/export-cleanup.ts';
import { claimExport } from '../../src/domain/bulk-export/export-jobs.ts';
import { runExport } from '../../src/fhir/export/export-runner.ts';
import { fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';
import { asyncHeaders, ndjsonLines, pathOf, useExportOrigin } from './bulk-export-support.ts';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';

// Bulk Data Access IG v2.0.0 (export.html): kick-off, status, manifest, files, cancel, expiry.
const origin = useExportOrigin({ CG_EXPORT_FILE_MAX_SIZE: '1500', CG_EXPORT_JOBS_PER_SITE: '2' });

async function seed(client: FhirClient, patients: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < patients; i++) {
    const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody(`BX-${i}`) })).json();
    ids.push(patient.id);
    const observation = await client.request('POST', '/fhir/Observation', {
      body: { resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: `Patient/${patient.id}` }, valueQuantity: { value: i, unit: 'g/dL' } },
    });
    assert.equal(observation.statusCode, 201);
  }
  return ids;
}

async function kickOff(client: FhirClient, url: string, headers: Record<string, string> = asyncHeaders) {
  const response = await client.request('GET', url, { headers });
  return response;
}

/** Kicks off, runs the job, and returns the manifest. */
async function exportAll(client: FhirClient, url: string): Promise<{ status: string; manifest: Record<string, any> }> {
  const response = await kickOff(client, url);
  assert.equal(response.statusCode, 202, response.body);
  const status = pathOf(response.headers['content-location'] as string);
  await origin.runPendingExports();
  const done = await client.request('GET', status);
  assert.equal(done.statusCode, 200, done.body);
  return { status, manifest: done.json() };
}

async function download(client: FhirClient, url: string): Promise<Record<string, any>[]> {
  const response = await client.request('GET', pathOf(url), { headers: { accept: 'application/fhir+ndjson' } });
  assert.equal(response.statusCode, 200, response.body);
  assert.match(response.headers['content-type'] as string, /^application\/fhir\+ndjson/);
  return ndjsonLines(response.body);
}

test('system export: kick-off 202 with a status URL, 202 with X-Progress while queued, then the manifest and NDJSON files per type, split by size', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  const patients = await seed(client, 12);
  const kick = await kickOff(client, '/fhir/$export');
  assert.equal(kick.statusCode, 202, kick.body);
  const statusUrl = kick.headers['content-location'] as string;
  assert.match(statusUrl, /^http:\/\/[^/]+\/fhir\/\$export-status\/[0-9a-f-]{36}$/);

  const pending = await client.request('GET', pathOf(statusUrl));
  assert.equal(pending.statusCode, 202);
  assert.equal(pending.headers['x-progress'], 'queued');
  assert.equal(pending.headers['retry-after'], '2');

  assert.equal(await origin.runPendingExports(), 1);
  const done = await client.request('GET', pathOf(statusUrl));
  assert.equal(done.statusCode, 200, done.body);
  assert.match(done.headers['content-type'] as string, /^application\/json/);
  assert.ok(done.headers.expires);
  const manifest = done.json();
  assert.equal(manifest.requiresAccessToken, true);
  assert.match(manifest.request, /\/fhir\/\$export$/);
  assert.ok(!Number.isNaN(Date.parse(manifest.transactionTime)));
  assert.deepEqual(manifest.error, []);
  // Types without resources have no file (export.html: output lists files that exist).
  assert.deepEqual([...new Set(manifest.output.map((file: { type: string }) => file.type))].sort(), ['Observation', 'Patient']);
  const patientFiles = manifest.output.filter((file: { type: string }) => file.type === 'Patient');
  assert.ok(patientFiles.length > 1, 'past CG_EXPORT_FILE_MAX_SIZE a type continues in another file');
  const exported: Record<string, any>[] = [];
  for (const file of manifest.output) {
    const lines = await download(client, file.url);
    assert.equal(lines.length, file.count);
    assert.ok(lines.every((resource) => resource.resourceType === file.type));
    exported.push(...lines);
  }
  assert.deepEqual(exported.filter((resource) => resource.resourceType === 'Patient').map((resource) => resource.id).sort(), [...patients].sort());
  assert.equal(exported.filter((resource) => resource.resourceType === 'Observation').length, 12);

  // Recorded in the data access log: who, the criteria, the count per type (written off the
  // request path, gathered for a few milliseconds: settled first).
  await dataAccessRecorder(origin.db.database).settled();
  const { rows } = await origin.db.database.query(
    "SELECT resource_type, resource_count, query FROM data_access_audit WHERE site_id = $1 AND interaction = 'export' ORDER BY resource_type",
    [client.site.siteId],
  );
  const counts = Object.fromEntries(rows.map((row) => [row.resource_type, row.resource_count]));
  assert.equal(counts.Patient, 12);
  assert.equal(counts.Observation, 12);
  assert.equal(counts.Condition, 0);
  assert.match(rows[0].query, /\$export/);
});

test('_type, _since and _outputFormat select what is exported; POST takes a Parameters resource', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  await seed(client, 2);
  const typed = await exportAll(client, '/fhir/$export?_type=Observation&_outputFormat=ndjson');
  assert.deepEqual(typed.manifest.output.map((file: { type: string }) => file.type), ['Observation']);

  const after = new Date(Date.now() + 1000).toISOString();
  const none = await exportAll(client, `/fhir/$export?_since=${encodeURIComponent(after)}&_outputFormat=application%2Fndjson`);
  assert.deepEqual(none.manifest.output, []);
  const since = await exportAll(client, `/fhir/$export?_since=${encodeURIComponent('2000-01-01T00:00:00Z')}&_type=Patient`);
  assert.equal(since.manifest.output.reduce((sum: number, file: { count: number }) => sum + file.count, 0), 2);

  const posted = await client.request('POST', '/fhir/$export', {
    headers: asyncHeaders,
    body: { resourceType: 'Parameters', parameter: [{ name: '_type', valueString: 'Patient' }, { name: '_outputFormat', valueString: 'application/fhir+ndjson' }] },
  });
  assert.equal(posted.statusCode, 202, posted.body);
  await origin.runPendingExports();
  const manifest = (await client.request('GET', pathOf(posted.headers['content-location'] as string))).json();
  assert.deepEqual([...new Set(manifest.output.map((file: { type: string }) => file.type))], ['Patient']);
});

test('Patient/$export exports the patient compartment: patients and the resources about one', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  const patients = await seed(client, 2);
  const { manifest } = await exportAll(client, '/fhir/Patient/$export');
  assert.match(manifest.request, /\/fhir\/Patient\/\$export$/);
  const exported = (await Promise.all(manifest.output.map((file: { url: string }) => download(client, file.url)))).flat();
  assert.deepEqual(exported.filter((resource) => resource.resourceType === 'Patient').map((resource) => resource.id).sort(), [...patients].sort());
  assert.ok(exported.filter((resource) => resource.resourceType === 'Observation').every((resource) => patients.includes(resource.subject.reference.slice(8))));
});

test('bad kick-offs are refused with an OperationOutcome: no Prefer, unsupported _outputFormat, malformed _since, unknown _type, unsupported parameter', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  const cases: [string, Record<string, string>, number, RegExp][] = [
    ['/fhir/$export', { accept: 'application/fhir+json' }, 400, /Prefer: respond-async/],
    ['/fhir/$export?_outputFormat=text%2Fcsv', asyncHeaders, 400, /_outputFormat/],
    ['/fhir/$export?_since=yesterday', asyncHeaders, 400, /_since/],
    ['/fhir/$export?_since=2024-01-02', asyncHeaders, 400, /time zone/],
    ['/fhir/$export?_type=Medication', asyncHeaders, 400, /Medication is not exported/],
    ['/fhir/Patient/$export?_typeFilter=Observation%3Fcode%3Dx', asyncHeaders, 400, /_typeFilter is not supported/],
    ['/fhir/$export', { ...asyncHeaders, accept: 'text/html' }, 406, /application\/fhir\+json/],
  ];
  for (const [url, headers, status, message] of cases) {
    const response = await kickOff(client, url, headers);
    assert.equal(response.statusCode, status, url);
    const outcome = response.json();
    assert.equal(outcome.resourceType, 'OperationOutcome', url);
    assert.match(outcome.issue[0].diagnostics, message, url);
  }
  const post = await client.request('POST', '/fhir/$export', { headers: asyncHeaders, body: { resourceType: 'Patient' } });
  assert.equal(post.statusCode, 400);
  const lenient = await kickOff(client, '/fhir/$export?_typeFilter=x&_type=Patient', { ...asyncHeaders, prefer: 'respond-async, handling=lenient' });
  assert.equal(lenient.statusCode, 202, lenient.body);
  assert.match(lenient.json().issue[0].diagnostics, /_typeFilter was ignored/);
  await origin.runPendingExports();

  for (const path of ['/fhir/$export-status/00000000-0000-4000-8000-000000000000', '/fhir/$export-status/not-a-uuid', '/fhir/$export-file/00000000-0000-4000-8000-000000000000/1']) {
    const response = await client.request('GET', path);
    assert.equal(response.statusCode, 404, path);
    assert.equal(response.json().resourceType, 'OperationOutcome');
  }
  assert.equal((await client.request('PUT', '/fhir/$export')).statusCode, 405);
  const { status, manifest } = await exportAll(client, '/fhir/$export?_type=Patient');
  assert.equal((await client.request('GET', status)).statusCode, 200);
  for (const url of manifest.output.map((file: { url: string }) => file.url)) {
    assert.equal((await client.request('GET', pathOf(url), { headers: { accept: 'text/csv' } })).statusCode, 406);
  }
  assert.equal((await client.request('GET', `${status.replace('export-status', 'export-file')}/99`)).statusCode, 404);
});

test('a site may have CG_EXPORT_JOBS_PER_SITE exports queued or running; the next kick-off is 429 with Retry-After', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  assert.equal((await kickOff(client, '/fhir/$export')).statusCode, 202);
  assert.equal((await kickOff(client, '/fhir/$export')).statusCode, 202);
  const refused = await kickOff(client, '/fhir/$export');
  assert.equal(refused.statusCode, 429);
  assert.equal(refused.headers['retry-after'], '60');
  assert.equal(refused.json().issue[0].code, 'throttled');
  // Another site is not held back by this one.
  assert.equal((await kickOff(await fhirClient(origin.app, origin.db.database), '/fhir/$export')).statusCode, 202);
  await origin.runPendingExports();
  assert.equal((await kickOff(client, '/fhir/$export')).statusCode, 202);
  await origin.runPendingExports();
});

test("another site's key sees none of it: status, files and DELETE of another site's export are 404", async () => {
  const owner = await fhirClient(origin.app, origin.db.database);
  const stranger = await fhirClient(origin.app, origin.db.database);
  await seed(owner, 1);
  const { status, manifest } = await exportAll(owner, '/fhir/$export');
  const file = pathOf(manifest.output[0].url);
  for (const [method, path] of [['GET', status], ['GET', file], ['DELETE', status]] as const) {
    const response = await stranger.request(method, path);
    assert.equal(response.statusCode, 404, `${method} ${path}`);
    assert.equal(response.json().resourceType, 'OperationOutcome');
  }
  assert.equal((await owner.request('GET', file)).statusCode, 200);
  // The stranger's own system export holds nothing of the owner's.
  const theirs = await exportAll(stranger, '/fhir/$export');
  assert.deepEqual(theirs.manifest.output, []);
});

test('DELETE on the status URL cancels a queued export or deletes a finished one with its files; afterwards everything is 404', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  await seed(client, 1);
  const queued = pathOf((await kickOff(client, '/fhir/$export')).headers['content-location'] as string);
  const cancelled = await client.request('DELETE', queued);
  assert.equal(cancelled.statusCode, 202);
  assert.equal((await client.request('GET', queued)).statusCode, 404);
  assert.equal(await origin.runPendingExports(), 0, 'a cancelled job is never run');

  const { status, manifest } = await exportAll(client, '/fhir/$export');
  const jobId = status.split('/').at(-1)!;
  const folder = join(origin.config.bulkExport.dir, client.site.siteId, jobId);
  assert.ok(existsSync(folder));
  assert.equal((await client.request('DELETE', status)).statusCode, 202);
  assert.equal(existsSync(folder), false, 'the files are deleted');
  assert.equal((await client.request('GET', status)).statusCode, 404);
  assert.equal((await client.request('GET', pathOf(manifest.output[0].url))).statusCode, 404);
  assert.equal((await client.request('DELETE', status)).statusCode, 404);
});

test('an export past its expiry is 404 at once, and the clean-up deletes its files and its job', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  await seed(client, 1);
  const { status, manifest } = await exportAll(client, '/fhir/$export');
  const jobId = status.split('/').at(-1)!;
  const { rows } = await origin.db.database.query<{ hours: number }>(
    'SELECT round(extract(epoch FROM expires_at - finished_at) / 3600)::int AS hours FROM bulk_export_job WHERE site_id = $1 AND id = $2',
    [client.site.siteId, jobId],
  );
  assert.equal(rows[0]!.hours, 24, 'CG_EXPORT_RETENTION_HOURS defaults to 24');
  await origin.db.database.query("UPDATE bulk_export_job SET expires_at = now() - interval '1 second' WHERE site_id = $1 AND id = $2", [client.site.siteId, jobId]);
  assert.equal((await client.request('GET', status)).statusCode, 404);
  assert.equal((await client.request('GET', pathOf(manifest.output[0].url))).statusCode, 404);

  const cleaned = await cleanUpExports(origin.db.database.pool, origin.config.bulkExport.dir);
  assert.equal(cleaned.ran, true);
  assert.ok(cleaned.expired >= 1);
  assert.equal(existsSync(join(origin.config.bulkExport.dir, client.site.siteId, jobId)), false);
  const left = await origin.db.database.query('SELECT 1 FROM bulk_export_job WHERE site_id = $1 AND id = $2', [client.site.siteId, jobId]);
  assert.equal(left.rowCount, 0);

  // One node at a time: while another holds the clean-up lock, this one skips its round.
  const holder = await origin.db.database.pool.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [0x62756c6b657870n.toString()]);
    assert.equal((await cleanUpExports(origin.db.database.pool, origin.config.bulkExport.dir)).ran, false);
    await holder.query('SELECT pg_advisory_unlock($1)', [0x62756c6b657870n.toString()]);
  } finally {
    holder.release();
  }
});

test('a worker whose job was cancelled or taken over since it claimed it gives it up and leaves no files', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  await seed(client, 2);
  const logger = pino({ level: 'silent' });
  for (const loss of ['cancelled', 'taken over'] as const) {
    const status = pathOf((await kickOff(client, '/fhir/$export')).headers['content-location'] as string);
    const jobId = status.split('/').at(-1)!;
    const job = (await claimExport(origin.db.database, 'slow-worker', 30))!;
    assert.equal(job.id, jobId);
    if (loss === 'cancelled') assert.equal((await client.request('DELETE', status)).statusCode, 202);
    else await origin.db.database.query("UPDATE bulk_export_job SET lease_owner = 'other-worker' WHERE site_id = $1 AND id = $2", [client.site.siteId, jobId]);
    const output = await runExport({ database: origin.db.database, settings: origin.config.bulkExport, owner: 'slow-worker', logger, stopping: () => false }, job);
    assert.equal(output, undefined, `${loss}: the worker gave the job up`);
    assert.equal(existsSync(join(origin.config.bulkExport.dir, client.site.siteId, jobId, 'attempt-1')), false, `${loss}: no files left`);
    if (loss === 'taken over') await origin.db.database.query('DELETE FROM bulk_export_job WHERE site_id = $1 AND id = $2', [client.site.siteId, jobId]);
  }
});

test('workers claiming at once each get a different job (FOR UPDATE SKIP LOCKED), and a claimed job is no one else\'s', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  const kicked = [await kickOff(client, '/fhir/$export'), await kickOff(client, '/fhir/$export')].map((response) => pathOf(response.headers['content-location'] as string).split('/').at(-1));
  const claims = await Promise.all(['worker-a', 'worker-b', 'worker-c'].map((owner) => claimExport(origin.db.database, owner, 30)));
  const claimed = claims.filter((job) => job !== undefined).map((job) => job.id);
  assert.deepEqual([...claimed].sort(), [...kicked].sort(), 'two jobs, two claims, never the same job twice');
  assert.equal(claims.filter((job) => job === undefined).length, 1, 'the third worker finds nothing to do');
  for (const id of kicked) assert.equal((await client.request('DELETE', `/fhir/$export-status/${id}`)).statusCode, 202);
});

test('a job whose worker died (its lease ran out) is taken over and restarted from the beginning', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  await seed(client, 3);
  const status = pathOf((await kickOff(client, '/fhir/$export?_type=Patient')).headers['content-location'] as string);
  const jobId = status.split('/').at(-1)!;
  // A worker of another node claimed it, wrote part of a file, and died: its lease lapsed.
  await origin.db.database.query(
    `UPDATE bulk_export_job SET state = 'running', lease_owner = 'dead-node:1', lease_expires_at = now() - interval '1 second', attempts = 1, started_at = now()
      WHERE site_id = $1 AND id = $2`,
    [client.site.siteId, jobId],
  );
  const running = await client.request('GET', status);
  assert.equal(running.statusCode, 202);
  assert.match(running.headers['x-progress'] as string, /^running/);
  assert.equal(await origin.runPendingExports('survivor'), 1);
  const manifest = (await client.request('GET', status)).json();
  assert.equal(manifest.output[0].count, 3);
  const { rows } = await origin.db.database.query('SELECT attempts, state FROM bulk_export_job WHERE site_id = $1 AND id = $2', [client.site.siteId, jobId]);
  assert.deepEqual(rows[0], { attempts: 2, state: 'completed' });
  assert.deepEqual(readdirSync(join(origin.config.bulkExport.dir, client.site.siteId, jobId)), ['attempt-2']);
});
