import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { runCliJson } from '../support/cli.ts';
import { send } from '../support/fresh-connection-request.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { everySurfaceOnAFreePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { writeSyntheticInstance } from '../dicom/support/synthetic-instance.ts';
import { workerTemporaryFolder } from '../../src/storage/dicom/temporary-folders.ts';
import { serviceMallocEnvironment } from '../../src/cli/service-runtime.ts';

// CG_WORKERS=2: a supervisor and two worker processes serve every surface on the same ports.
const exec = promisify(execFile);

let db: TestDatabase;
let service: ServiceProcess;
let env: NodeJS.ProcessEnv;
let key: string;
let siteId: string;
const acknowledged = { patients: 0, messages: 0, instances: 0, steps: 0 };

before(async () => {
  db = await createTestDatabase();
  env = { CG_DATABASE_URL: db.connectionString, CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-workers-')), CG_WORKERS: '2', ...everySurfaceOnAFreePort };
  service = await startServiceProcess(env, 8);
  ({ id: siteId } = await runCliJson<{ id: string }>(['site', 'create', '--name', 'Harbour', '--ae-title', 'HARBOUR'], env));
  await runCliJson(['user', 'create', '--site', 'Harbour', '--email', 'ris@harbour.test', '--role', 'clinician'], env);
  ({ key } = await runCliJson<{ key: string }>(['key', 'create', '--site', 'Harbour', '--user', 'ris@harbour.test'], env));
  await runCliJson(['client', 'create', '--site', 'Harbour', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1'], env);
});
after(async () => {
  await service?.stop('SIGKILL');
  await db?.drop();
});


function origin(surface: string): string {
  return `http://127.0.0.1:${service.ports[surface]}`;
}

const httpSurfaces = ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb'];

/** The workers that answered /readyz on fresh connections to every HTTP origin. */
async function readyWorkers(rounds: number): Promise<Set<number>> {
  const workers = new Set<number>();
  for (let round = 0; round < rounds; round++) {
    for (const surface of httpSurfaces) {
      const answer = await send(`${origin(surface)}/readyz`);
      assert.equal(answer.status, 200, `${surface}: ${answer.body}`);
      workers.add((JSON.parse(answer.body) as { worker: number }).worker);
    }
  }
  return workers;
}

/** Log lines of the service as objects (its stdout is JSON). */
function logEntries(): Record<string, unknown>[] {
  return service.logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

async function waitForLog(predicate: (entry: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const found = logEntries().find(predicate);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no log line: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function workerPid(worker: number, after = 0): Promise<number> {
  return waitForLog((entry) => entry.msg === 'worker serving' && entry.worker === worker && entry.pid !== after, `worker ${worker} serving`).then((entry) => entry.pid as number);
}

let sequence = 0;
function hl7(type: string, segments: string[]): string {
  return [`MSH|^~\\&|LAB|HARBOURLAB|GATEWAY|HARBOUR|20240102030405||${type}|W-${randomUUID()}|P|2.5.1`, ...segments].join('\r');
}

/** One item through every surface, each acknowledged; counts what was acknowledged. */
async function exerciseEverySurface(): Promise<void> {
  sequence++;
  const headers = { 'x-api-key': key, 'content-type': 'application/fhir+json' };
  const created = await send(`${origin('fhir')}/fhir/Patient`, { method: 'POST', headers, body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: `F-${sequence}` }], name: [{ family: 'Harbour' }] }) });
  assert.equal(created.status, 201, created.body);
  acknowledged.patients++;
  assert.equal((await send(`${origin('fhir')}/fhir/Patient/${(JSON.parse(created.body) as { id: string }).id}`, { headers })).status, 200);

  const ingested = await send(`${origin('hl7')}/v2/ingest`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'x-application/hl7-v2+er7' }, body: hl7('ADT^A01^ADT_A01', [`PID|1||H-${sequence}||Harbour^Ann||19800101|F`]) });
  assert.equal(ingested.status, 200, ingested.body);
  assert.match(ingested.body, /MSA\|AA/);
  acknowledged.messages++;

  const file = join(env.CG_DATA_DIR!, `adt-${sequence}.hl7`);
  writeFileSync(file, hl7('ADT^A04^ADT_A01', [`PID|1||M-${sequence}||Harbour^Bo||19800101|M`]));
  const sent = await exec('mllp_send', ['--loose', '--file', file, '--port', String(service.ports.mllp), '127.0.0.1']);
  assert.match(sent.stdout, /MSA\|AA\|/);
  acknowledged.messages++;

  const study = `1.2.826.0.1.3680043.10.2.${sequence}`;
  const instance = join(env.CG_DATA_DIR!, `instance-${sequence}.dcm`);
  await writeSyntheticInstance(instance, { study, series: `${study}.1`, instance: `${study}.1.1` }, 4, 4);
  await exec('echoscu', ['-aec', 'HARBOUR', '127.0.0.1', String(service.ports.dicom)]);
  await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'HARBOUR', '127.0.0.1', String(service.ports.dicom), instance], { env: { ...process.env, TCP_NODELAY: '1' } });
  acknowledged.instances++;

  const step = await send(`${origin('mpps')}/ingest`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ sop_instance_uid: `${study}.9`, study_uid: study, status: 'IN PROGRESS' }) });
  assert.equal(step.status, 201, step.body);
  acknowledged.steps++;

  assert.equal((await send(`${origin('connectivity')}/connectivity/dimse`, { headers: { 'x-api-key': key } })).status, 200);
  const password = readFileSync(join(env.CG_DATA_DIR!, 'initial-admin-password'), 'utf8').trim();
  const signedIn = await send(`${origin('admin')}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@localhost', password }) });
  assert.equal(signedIn.status, 200, signedIn.body);
  const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
  assert.equal((await send(`${origin('admin')}/api/sites`, { headers: { cookie } })).status, 200);
}

/** Opens and closes MLLP connections from an address no client is registered for; each worker that accepts one logs it. */
async function unregisteredMllpConnections(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await new Promise<void>((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port: service.ports.mllp!, localAddress: '127.0.0.2' });
      socket.setTimeout(30_000, () => socket.destroy(new Error('the MLLP listener did not close the connection')));
      socket.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve() : reject(error)));
      socket.on('close', () => resolve());
      socket.resume();
    });
  }
}

test('two workers serve every surface on the same ports, and both take connections', { timeout: 180_000 }, async () => {
  assert.deepEqual([...(await readyWorkers(2))].sort(), [1, 2]);
  for (let i = 0; i < 2; i++) await exerciseEverySurface();
  for (let i = 0; i < 4; i++) await exec('echoscu', ['-aec', 'HARBOUR', '127.0.0.1', String(service.ports.dicom)]);
  await unregisteredMllpConnections(4);
  const dicomWorkers = new Set<unknown>();
  const mllpWorkers = new Set<unknown>();
  await waitForLog((entry) => {
    if (entry.surface === 'dicom' && entry.msg === 'association released') dicomWorkers.add(entry.worker);
    if (entry.surface === 'mllp' && String(entry.msg).startsWith('MLLP connection from an address no integration client admits')) mllpWorkers.add(entry.worker);
    return dicomWorkers.size === 2 && mllpWorkers.size === 2;
  }, 'DICOM associations and MLLP connections on both workers');
});

test('workers run with the malloc settings the supervisor was started without', async () => {
  // The harness starts `serve` with plain node, not the launcher: the supervisor's own environment lacks them.
  const supervisor = service.child.pid!;
  assert.equal(environmentOf(supervisor).MALLOC_ARENA_MAX, undefined);
  const workers = readFileSync(`/proc/${supervisor}/task/${supervisor}/children`, 'utf8').trim().split(/\s+/).map(Number)
    .filter((pid) => environmentOf(pid).CG_WORKER_NUMBER !== undefined);
  assert.equal(workers.length, 2);
  for (const pid of workers) {
    const environment = environmentOf(pid);
    for (const [name, value] of Object.entries(serviceMallocEnvironment)) assert.equal(environment[name], value, `worker pid ${pid}: ${name}`);
  }
});

function environmentOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((entry) => {
    const at = entry.indexOf('=');
    return [entry.slice(0, at), entry.slice(at + 1)] as const;
  });
  return Object.fromEntries(entries);
}

/** An empty temporary transfer file in a worker's own folder, named as the DICOM listener names them. */
function temporaryTransfer(worker: number): string {
  const nodeId = readFileSync(join(env.CG_DATA_DIR!, 'node-id'), 'utf8').trim();
  const folder = workerTemporaryFolder(join(env.CG_DATA_DIR!, 'dicom'), nodeId, worker);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, `${randomUUID()}~${siteId}.part`);
  writeFileSync(path, '');
  return path;
}

test('a worker killed with SIGKILL is replaced while the other keeps serving; nothing acknowledged is lost', { timeout: 240_000 }, async () => {
  for (const [victim, survivor] of [[1, 2], [2, 1]] as const) {
    // A transfer the victim left half-written, and one the survivor is writing now (as far as
    // files show: a temporary name in each worker's own folder).
    const leftover = temporaryTransfer(victim);
    const inFlight = temporaryTransfer(survivor);
    const pid = await workerPid(victim);
    process.kill(pid, 'SIGKILL');
    await waitForLog((entry) => entry.level === 50 && entry.worker === victim && entry.pid === pid && String(entry.msg).includes('died (SIGKILL)'), `worker ${victim} died`);
    await exerciseEverySurface();
    await workerPid(victim, pid);
    assert.deepEqual([...(await readyWorkers(2))].sort(), [1, 2]);
    assert.equal(existsSync(leftover), false, 'the replacement recovered its own folder');
    assert.equal(existsSync(inFlight), true, "the replacement left the other worker's transfer alone");
  }
  const counts = await db.database.query<{ patients: number; messages: number; instances: number; steps: number }>(
    `SELECT (SELECT count(*)::int FROM clinical_resource WHERE resource_type = 'Patient' AND content #>> '{name,0,family}' = 'Harbour' AND business_identifier LIKE 'F-%') AS patients,
            (SELECT count(*)::int FROM inbound_message WHERE ack_code = 'AA') AS messages,
            (SELECT count(*)::int FROM imaging_instance) AS instances,
            (SELECT count(*)::int FROM imaging_procedure_step) AS steps`,
  );
  assert.deepEqual(counts.rows[0], acknowledged);
});

test('a key revoked is refused by every worker at once', { timeout: 60_000 }, async () => {
  const headers = { 'x-api-key': key };
  // Both workers have the key in their credential caches.
  for (let i = 0; i < 4; i++) assert.equal((await send(`${origin('fhir')}/fhir/Patient?_count=1`, { headers })).status, 200);
  const keys = await runCliJson<{ id: string }[]>(['key', 'list', '--site', 'Harbour'], env);
  await runCliJson(['key', 'revoke', keys[0]!.id], env);
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await send(`${origin('fhir')}/fhir/Patient?_count=1`, { headers })).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401]);
});

test('SIGTERM drains every worker and the supervisor exits 0 (before its 10 s deadline)', { timeout: 60_000 }, async () => {
  const code = await service.stop('SIGTERM');
  assert.equal(code, 0);
  const stopped = logEntries().filter((entry) => entry.msg === 'stopped');
  assert.deepEqual(stopped.map((entry) => entry.worker ?? 'supervisor').sort(), [1, 2, 'supervisor']);
});
