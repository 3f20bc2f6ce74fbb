import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { insertObservations } from './bulk-export-support.ts';
import { useFhirServiceProcess } from './fhir-test-origin.ts';

// A job survives its process: the service is killed (SIGKILL, nothing runs at exit) while it
// writes an export; a new process takes the job over once the dead one's lease has lapsed.
const running = useFhirServiceProcess();

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 6000; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

test('an export whose process is killed mid-way is restarted by the next process and completes', async () => {
  const { db } = running;
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const rows = 80_000;
  await insertObservations(db.database, site.siteId, rows, 200);
  const env = { CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-export-restart-')), CG_WORKERS: '1', CG_EXPORT_LEASE_SECONDS: '2' };
  let service = await running.start(env);
  const base = `http://127.0.0.1:${service.ports.fhir}`;
  const kickOff = await fetch(`${base}/fhir/$export?_type=Observation`, { headers: { 'x-api-key': key, prefer: 'respond-async', accept: 'application/fhir+json' } });
  assert.equal(kickOff.status, 202);
  const status = kickOff.headers.get('content-location')!;
  const jobId = status.split('/').at(-1)!;
  const state = async () => (await db.database.query('SELECT state, attempts FROM bulk_export_job WHERE site_id = $1 AND id = $2', [site.siteId, jobId])).rows[0]!;

  await until('the job to be claimed', async () => ((await state()).state === 'running' ? true : undefined));
  await service.stop('SIGKILL');
  running.service = undefined;
  assert.deepEqual(await state(), { state: 'running', attempts: 1 }, 'killed mid-export: the row still names the dead worker');

  service = await running.start(env);
  const restarted = `http://127.0.0.1:${service.ports.fhir}${new URL(status).pathname}`;
  const manifest = await until('the export to complete', async () => {
    const response = await fetch(restarted, { headers: { 'x-api-key': key } });
    if (response.status === 202) return undefined;
    assert.equal(response.status, 200);
    return (await response.json()) as { output: { count: number; url: string }[] };
  });
  assert.equal(manifest.output.reduce((sum, file) => sum + file.count, 0), rows);
  assert.deepEqual(await state(), { state: 'completed', attempts: 2 });
  const file = await fetch(manifest.output[0]!.url.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${service.ports.fhir}`), { headers: { 'x-api-key': key } });
  assert.equal(file.status, 200);
  const lines = (await file.text()).split('\n').filter((line) => line !== '');
  assert.equal(lines.length, manifest.output[0]!.count);
});
