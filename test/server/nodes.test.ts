import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { workerTemporaryFolder } from '../../src/storage/dicom/temporary-folders.ts';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { loadMigrations } from '../../src/storage/migrations.ts';
import { datasetOf, dicomFixture } from '../dicom/support/dicom-harness.ts';
import { associate, cStoreRequest, pData } from '../dicom/support/raw-peer.ts';
import { runCliJson } from '../support/cli.ts';
import { send } from '../support/fresh-connection-request.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { everySurfaceOnAFreePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

// Two nodes (node A with two workers, node B a single process) on one PostgreSQL and one shared
// DICOM storage folder, each with its own data directory, started at the same moment on an empty
// database, as real `serve` processes.
const exec = promisify(execFile);

let db: TestDatabase;
const storage = mkdtempSync(join(tmpdir(), 'cg-shared-storage-'));
const dataDirs = { a: mkdtempSync(join(tmpdir(), 'cg-node-a-')), b: mkdtempSync(join(tmpdir(), 'cg-node-b-')) };
const nodes: Record<'a' | 'b', ServiceProcess | undefined> = { a: undefined, b: undefined };
let envOf: (node: 'a' | 'b') => NodeJS.ProcessEnv;
let nodeIdB: string;
let siteId: string;
let userId: string;
let key: string;
let keyId: string;
let clientId: string;
const stopped: ServiceProcess[] = [];

before(async () => {
  db = await createTestDatabase({ migrate: false });
  envOf = (node) => ({
    CG_DATABASE_URL: db.connectionString,
    CG_DATA_DIR: dataDirs[node],
    CG_DICOM_STORAGE_DIR: storage,
    ...(node === 'a' ? { CG_NODE_ID: 'node-a', CG_WORKERS: '2' } : { CG_WORKERS: '1' }),
    ...everySurfaceOnAFreePort,
  });
  [nodes.a, nodes.b] = await Promise.all([startServiceProcess(envOf('a'), 8), startServiceProcess(envOf('b'), 8)]);
  nodeIdB = readFileSync(join(dataDirs.b, 'node-id'), 'utf8').trim();
  const env = envOf('a');
  ({ id: siteId } = await runCliJson<{ id: string }>(['site', 'create', '--name', 'Harbour', '--ae-title', 'HARBOUR'], env));
  ({ id: userId } = await runCliJson<{ id: string }>(['user', 'create', '--site', 'Harbour', '--email', 'ris@harbour.test', '--role', 'clinician'], env));
  ({ id: keyId, key } = await runCliJson<{ id: string; key: string }>(['key', 'create', '--site', 'Harbour', '--user', 'ris@harbour.test'], env));
  ({ id: clientId } = await runCliJson<{ id: string }>(['client', 'create', '--site', 'Harbour', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1'], env));
});
after(async () => {
  await Promise.all([nodes.a?.stop('SIGKILL'), nodes.b?.stop('SIGKILL'), ...stopped.map((node) => node.stop('SIGKILL'))]);
  await db?.drop();
});


const origin = (node: 'a' | 'b', surface: string) => `http://127.0.0.1:${nodes[node]!.ports[surface]}`;
const fhirHeaders = () => ({ 'x-api-key': key, 'content-type': 'application/fhir+json' });

/** Asks until the answer is the expected one, at most `attempts` times (a change reaches a node by notification, not by a delay). */
async function eventually(what: string, check: () => Promise<boolean>, attempts = 400): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  assert.fail(`${what}: not after ${attempts} attempts`);
}

async function mllpAck(node: 'a' | 'b', control: string): Promise<string> {
  const file = join(dataDirs[node], `${control}.hl7`);
  writeFileSync(file, [`MSH|^~\\&|LAB|HARBOURLAB|GATEWAY|HARBOUR|20240102030405||ADT^A01^ADT_A01|${control}|P|2.5.1`, `PID|1||${control}||Harbour^Ann||19800101|F`].join('\r'));
  const sent = await exec('mllp_send', ['--loose', '--file', file, '--port', String(nodes[node]!.ports.mllp), '127.0.0.1']).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return sent.stdout;
}

test('two nodes started at the same moment on an empty database: migrations applied once, one first-run admin, one paging secret, a lease each', async () => {
  const migrations = await loadMigrations();
  const appliedLists = (['a', 'b'] as const).map((node) =>
    nodes[node]!.logs.flatMap((line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; applied?: string[] };
        return entry.msg === 'database ready' ? [entry.applied ?? []] : [];
      } catch {
        return [];
      }
    }),
  );
  assert.deepEqual(appliedLists.map((lists) => lists.length), [1, 1], 'each node migrated once');
  assert.deepEqual(appliedLists.map((lists) => lists[0]!.length).sort((x, y) => x - y), [0, migrations.length], 'one node applied every migration, the other none');
  const { rows } = await db.database.query<{ migrations: number; admins: number; nodes: string[] }>(
    `SELECT (SELECT count(*)::int FROM schema_migration) AS migrations,
            (SELECT count(*)::int FROM app_user WHERE role = 'service-admin') AS admins,
            (SELECT array_agg(node_id ORDER BY node_id) FROM service_node) AS nodes`,
  );
  assert.deepEqual(rows[0], { migrations: migrations.length, admins: 1, nodes: ['node-a', nodeIdB].sort() });
  assert.equal([dataDirs.a, dataDirs.b].filter((dir) => existsSync(join(dir, 'initial-admin-password'))).length, 1, 'the password file is on the node that created the admin');

  // Both nodes page FHIR searches with the one secret: a page link from node A is followed on node B.
  for (const node of ['a', 'b'] as const) {
    const created = await send(`${origin(node, 'fhir')}/fhir/Patient`, { method: 'POST', headers: fhirHeaders(), body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: `P-${node}` }], name: [{ family: 'Pager' }] }) });
    assert.equal(created.status, 201, created.body);
  }
  const first = await send(`${origin('a', 'fhir')}/fhir/Patient?name=pager&_count=1`, { headers: fhirHeaders() });
  const next = (JSON.parse(first.body) as { link: { relation: string; url: string }[] }).link.find((link) => link.relation === 'next');
  assert.ok(next, first.body);
  const onB = await send(next.url.replace(origin('a', 'fhir'), origin('b', 'fhir')), { headers: fhirHeaders() });
  assert.equal(onB.status, 200, onB.body);
  const secrets = await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM fhir_paging_secret');
  assert.equal(secrets.rows[0]!.n, 1);

  for (const node of ['a', 'b'] as const) {
    const ready = JSON.parse((await send(`${origin(node, 'fhir')}/readyz`)).body) as { node: string };
    assert.equal(ready.node, node === 'a' ? 'node-a' : nodeIdB);
  }
});

test('both nodes take C-STORE into the one storage folder, FHIR and MLLP writes; each node finds the other\'s instance', async () => {
  const sent = { a: dicomFixture('CT_small.dcm'), b: dicomFixture('MR_small.dcm') };
  for (const node of ['a', 'b'] as const) {
    const stored = await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'HARBOUR', '127.0.0.1', String(nodes[node]!.ports.dicom), sent[node]], { env: { ...process.env, TCP_NODELAY: '1' } });
    assert.equal(stored.stderr, '');
    assert.match(await mllpAck(node, `M-${node}-${randomUUID().slice(0, 8)}`), /MSA\|AA\|/);
  }
  const { rows } = await db.database.query<{ storage_path: string; sha256: string }>('SELECT storage_path, sha256 FROM imaging_instance WHERE site_id = $1', [siteId]);
  assert.equal(rows.length, 2);
  for (const row of rows) {
    // Whichever node stored it, the file is in the shared folder and holds the indexed bytes.
    const file = resolveStoredInstance(storage, row.storage_path);
    assert.ok(file.startsWith(storage), 'in the shared storage folder');
    assert.equal(createHash('sha256').update(datasetOf(await readFile(file))).digest('hex'), row.sha256);
  }
  // Re-sent to the other node, each instance is recognised as stored, and its file kept as it is.
  for (const node of ['a', 'b'] as const) {
    const other = node === 'a' ? 'b' : 'a';
    const again = await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'HARBOUR', '127.0.0.1', String(nodes[other]!.ports.dicom), sent[node]], { env: { ...process.env, TCP_NODELAY: '1' } });
    assert.equal(again.stderr, '');
  }
  const count = await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [siteId]);
  assert.equal(count.rows[0]!.n, 2);
});

test("a node starting recovers its own temporary files and never another node's transfer in flight", { timeout: 240_000 }, async () => {
  const ctClass = '1.2.840.10008.5.1.4.1.1.2';
  const dataset = datasetOf(await readFile(dicomFixture('CT_small.dcm')));
  const uid = `1.2.826.0.1.3680043.10.9.${Date.now()}`;
  // Node B is mid-transfer: the command and the first part of the data set are in.
  const peer = await associate(nodes.b!.ports.dicom!, 'HARBOUR', [{ id: 1, abstractSyntax: ctClass, transferSyntaxes: ['1.2.840.10008.1.2.1'] }]);
  peer.write(pData(1, true, true, cStoreRequest(1, ctClass, uid)));
  peer.write(pData(1, false, false, dataset.subarray(0, 2_000)));
  const folderB = workerTemporaryFolder(storage, nodeIdB, 1);
  let inFlight: string | undefined;
  await eventually('node B writes its transfer', async () => {
    inFlight = readdirSync(folderB).map((name) => join(folderB, name)).find((path) => statSync(path).size > 0);
    return inFlight !== undefined;
  });
  // Node A left a half-written transfer of its own (a crash), in a worker folder it has no more.
  const folderA = workerTemporaryFolder(storage, 'node-a', 5);
  mkdirSync(folderA, { recursive: true });
  const leftover = join(folderA, `${randomUUID()}~${siteId}.part`);
  writeFileSync(leftover, 'half a transfer');

  assert.equal(await nodes.a!.stop('SIGTERM'), 0);
  nodes.a = await startServiceProcess(envOf('a'), 8);
  assert.equal(existsSync(leftover), false, "node A recovered its own leftover");
  assert.equal(existsSync(inFlight!), true, "node B's transfer in flight is untouched");
  assert.equal(statSync(inFlight!).size > 0, true);
  peer.destroy();
});

test('a second node with a node id in use is refused with a clear message', { timeout: 180_000 }, async () => {
  const env = { ...envOf('a'), CG_DATA_DIR: mkdtempSync(join(tmpdir(), 'cg-node-a2-')) };
  await assert.rejects(
    async () => {
      stopped.push(await startServiceProcess(env, 8));
    },
    (error: Error) => /node id node-a is in use by a running node/.test(error.message),
  );
});

test('a change made on node A is obeyed by node B at once: a revoked key, a deactivated user, an AE title, an MLLP client\'s addresses', { timeout: 240_000 }, async () => {
  const password = readFileSync(join(existsSync(join(dataDirs.a, 'initial-admin-password')) ? dataDirs.a : dataDirs.b, 'initial-admin-password'), 'utf8').trim();
  const signedIn = await send(`${origin('a', 'admin')}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@localhost', password }) });
  assert.equal(signedIn.status, 200, signedIn.body);
  const admin = { cookie: String(signedIn.headers['set-cookie']).split(';')[0]!, 'x-csrf-token': (JSON.parse(signedIn.body) as { csrf_token: string }).csrf_token, 'content-type': 'application/json' };
  const onA = async (method: string, path: string, body: unknown) => {
    const answer = await send(`${origin('a', 'admin')}${path}`, { method, headers: admin, body: JSON.stringify(body) });
    assert.equal(answer.status, 200, `${method} ${path}: ${answer.body}`);
  };
  const readOnB = async (apiKey: string) => (await send(`${origin('b', 'fhir')}/fhir/Patient?name=harbour`, { headers: { 'x-api-key': apiKey } })).status;
  const echoOnB = async (aeTitle: string) => (await exec('echoscu', ['-aec', aeTitle, '127.0.0.1', String(nodes.b!.ports.dicom)]).then(() => true, () => false));

  // Node B has each of them cached: used just now.
  assert.equal(await readOnB(key), 200);
  assert.match(await mllpAck('b', `C-${randomUUID().slice(0, 8)}`), /MSA\|AA\|/);
  assert.equal(await echoOnB('HARBOUR'), true);

  await onA('POST', `/api/sites/${siteId}/keys/${keyId}/revoke`, {});
  await eventually('node B refuses the revoked key', async () => (await readOnB(key)) === 401);

  const { key: second } = await runCliJson<{ key: string }>(['key', 'create', '--site', 'Harbour', '--user', 'ris@harbour.test'], envOf('b'));
  assert.equal(await readOnB(second), 200);
  await onA('PATCH', `/api/sites/${siteId}/users/${userId}`, { active: false });
  await eventually("node B refuses a deactivated user's key", async () => (await readOnB(second)) === 401);

  await onA('PATCH', `/api/sites/${siteId}`, { ae_title: 'HARBOUR2' });
  await eventually('node B answers the new AE title', () => echoOnB('HARBOUR2'));
  assert.equal(await echoOnB('HARBOUR'), false, 'and no longer the old one');

  await onA('PATCH', `/api/sites/${siteId}/clients/${clientId}`, { allowed_ips: ['192.0.2.1'] });
  await eventually('node B no longer admits the MLLP client from its old address', async () => !/MSA\|AA\|/.test(await mllpAck('b', `D-${randomUUID().slice(0, 8)}`)));
});
