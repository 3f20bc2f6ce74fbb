import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestApiKey } from '../support/http.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { createTestSite } from '../support/sites.ts';
import { insertObservations } from './bulk-export-support.ts';

// A job survives its process: the service is killed (SIGKILL, nothing runs at exit) while it
// writes an export; a new process takes the job over once the dead one's lease has lapsed.
let db: TestDatabase;
let service: ServiceProcess | undefined;
const onlyFhir = { CG_FHIR_PORT: '0', CG_HL7_PORT: '', CG_MPPS_PORT: '', CG_CONNECTIVITY_PORT: '', CG_ADMIN_PORT: '', CG_DICOMWEB_PORT: '', CG_MLLP_PORT: '', CG_DICOM_PORT: '' };
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await service?.stop('SIGKILL');
  await db?.drop();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 6000; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`gave up waiting for ${what}`);
}

test('an export whose process is killed mid-way is restarted by the next process and completes', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const rows = 80_000;
  await insertObservations(db.database, site.siteId, rows, 200);
  const env = { CG_DATABASE_URL: db.connectionString, CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-export-restart-')), CG_WORKERS: '1', CG_EXPORT_LEASE_SECONDS: '2', ...onlyFhir };
  service = await startServiceProcess(env, 1);
  const base = `http://127.0.0.1:${service.ports.fhir}`;
  const kickOff = await fetch(`${base}/fhir/$export?_type=Observation`, { headers: { 'x-api-key': key, prefer: 'respond-async', accept: 'application/fhir+json' } });
  assert.equal(kickOff.status, 202);
  const status = kickOff.headers.get('content-location')!;
  const jobId = status.split('/').at(-1)!;
  const state = async () => (await db.database.query('SELECT state, attempts FROM bulk_export_job WHERE site_id = $1 AND id = $2', [site.siteId, jobId])).rows[0]!;

  await until('the job to be claimed', async () => ((await state()).state === 'running' ? true : undefined));
  await service.stop('SIGKILL');
  service = undefined;
  assert.deepEqual(await state(), { state: 'running', attempts: 1 }, 'killed mid-export: the row still names the dead worker');

  service = await startServiceProcess(env, 1);
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
