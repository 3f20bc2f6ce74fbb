import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { writeSyntheticInstance } from '../dicom/support/synthetic-instance.ts';
import { v3Fixture } from '../hl7v3/support.ts';
import { runCliJson } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { freePortsOnEvery, nodeStateScript, portEnvironment, startHaproxy, type RunningHaproxy, type Surface } from '../support/haproxy.ts';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

// HAProxy with the repository's configuration (deploy/haproxy/haproxy.cfg) on 127.0.0.1 in front
// of two `serve` nodes on 127.0.0.2 and 127.0.0.3, all on the same ports as in a deployment, one
// PostgreSQL database. Clients reach the service only through the balancer, some of them from
// other loopback addresses, so that the nodes must learn the client's address from it.
const exec = promisify(execFile);
const balancer = '127.0.0.1';
const nodeAddresses = { node1: '127.0.0.2', node2: '127.0.0.3' } as const;
type NodeName = keyof typeof nodeAddresses;
/** The address the lab's MLLP integration client admits, and one nobody admits. */
const labAddress = '127.0.0.5';
const strangerAddress = '127.0.0.6';

let db: TestDatabase;
let ports: Record<Surface, number>;
let haproxy: RunningHaproxy;
const nodes = {} as Record<NodeName, ServiceProcess>;
const nodeEnv = {} as Record<NodeName, NodeJS.ProcessEnv>;
let workDir: string;
let key: string;
let siteId: string;

before(async () => {
  db = await createTestDatabase();
  workDir = mkdtempSync(join(tmpdir(), 'cg-haproxy-'));
  ports = await freePortsOnEvery([balancer, ...Object.values(nodeAddresses)]);
  for (const [name, address] of Object.entries(nodeAddresses) as [NodeName, string][]) {
    nodeEnv[name] = {
      CG_DATABASE_URL: db.connectionString,
      CG_DATA_DIR: join(workDir, name),
      CG_BIND: address,
      CG_WORKERS: '1',
      CG_TRUSTED_PROXIES: balancer,
      // Debug: each MLLP message acknowledged is a line, so that the test sees which node took it.
      CG_LOG_LEVEL: 'debug',
      ...portEnvironment(ports),
    };
  }
  // One after the other: the first node creates the first-run administrator.
  nodes.node1 = await startServiceProcess(nodeEnv.node1, 8);
  nodes.node2 = await startServiceProcess(nodeEnv.node2, 8);
  const cli = nodeEnv.node1;
  ({ id: siteId } = await runCliJson<{ id: string }>(['site', 'create', '--name', 'Quayside', '--ae-title', 'QUAYSIDE'], cli));
  await runCliJson(['user', 'create', '--site', 'Quayside', '--email', 'ris@quayside.test', '--role', 'clinician'], cli);
  ({ key } = await runCliJson<{ key: string }>(['key', 'create', '--site', 'Quayside', '--user', 'ris@quayside.test'], cli));
  await runCliJson(['client', 'create', '--site', 'Quayside', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', labAddress, '--sending-application', 'LAB', '--sending-facility', 'QUAYLAB'], cli);
  // The balancer's own address is admitted too, for another sender: a node that took the
  // balancer's address for the client's would admit the lab's messages under this client's rules.
  await runCliJson(['client', 'create', '--site', 'Quayside', '--name', 'ward', '--protocol', 'hl7-mllp', '--allowed-ips', balancer, '--sending-application', 'WARD', '--sending-facility', 'QUAYWARD'], cli);
  haproxy = await startHaproxy({ bind: balancer, nodes: [nodeAddresses.node1, nodeAddresses.node2], ports, dir: workDir });
  await haproxy.waitFor('node1', 'UP');
  await haproxy.waitFor('node2', 'UP');
});

after(async () => {
  await haproxy?.stop();
  for (const node of Object.values(nodes)) await node.stop('SIGKILL');
  await db?.drop();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One HTTP exchange through the balancer on a connection of its own, from `from`. */
function send(surface: Surface, path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; from?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: options.host ?? balancer, port: ports[surface], path, method: options.method ?? 'GET', headers: options.headers, agent: false, timeout: 30_000, ...(options.from ? { localAddress: options.from } : {}) },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body, headers: response.headers }));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${surface} ${path} did not answer`)));
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

/** MLLP release 1 framing (HL7 v2.5.1 Appendix C): one message on a connection of its own, from `from`. */
function sendMllp(message: string, options: { from: string; host?: string; port?: number; prefix?: Buffer }): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: options.host ?? balancer, port: options.port ?? ports.mllp, localAddress: options.from });
    let answer = Buffer.alloc(0);
    socket.setTimeout(20_000, () => socket.destroy(new Error('no MLLP answer')));
    socket.on('connect', () => socket.write(Buffer.concat([options.prefix ?? Buffer.alloc(0), Buffer.from([0x0b]), Buffer.from(message, 'utf8'), Buffer.from([0x1c, 0x0d])])));
    socket.on('data', (chunk: Buffer) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf(0x1c);
      if (end >= 0) {
        socket.end();
        resolve(answer.subarray(1, end).toString('utf8'));
      }
    });
    // Closed without an acknowledgement: the sender was not admitted.
    socket.on('close', () => resolve(undefined));
    socket.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? resolve(undefined) : reject(error)));
  });
}

function adt(sender: { application: string; facility: string }, controlId: string, mrn: string): string {
  return [`MSH|^~\\&|${sender.application}|${sender.facility}|GATEWAY|QUAYSIDE|20240102030405||ADT^A01^ADT_A01|${controlId}|P|2.5.1`, `PID|1||${mrn}||Quay^Ann||19800101|F`, 'PV1|1|I'].join('\r');
}
const lab = { application: 'LAB', facility: 'QUAYLAB' };

function logEntries(node: NodeName): Record<string, unknown>[] {
  return nodes[node].logs.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The HTTP requests a node's log says it answered, per surface (its own origin's log lines); with `since`, only those completed after it. */
function requestsServed(node: NodeName, path?: RegExp, since?: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of logEntries(node)) {
    if (entry.msg !== 'request completed' || (path && !path.test(String(entry.path)))) continue;
    if (since !== undefined && Date.parse(String(entry.time)) <= since) continue;
    counts[String(entry.surface)] = (counts[String(entry.surface)] ?? 0) + 1;
  }
  return counts;
}

async function adminCookie(): Promise<string> {
  const password = readFileSync(join(nodeEnv.node1.CG_DATA_DIR!, 'initial-admin-password'), 'utf8').trim();
  const signedIn = await send('admin', '/api/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'admin@localhost', password }) });
  assert.equal(signedIn.status, 200, signedIn.body);
  return String(signedIn.headers['set-cookie']).split(';')[0]!;
}

async function messageLogRow(controlId: string): Promise<{ remote_address: string; ack_code: string } | undefined> {
  const rows = await db.database.query<{ remote_address: string; ack_code: string }>('SELECT remote_address, ack_code FROM inbound_message WHERE site_id = $1 AND control_id = $2', [siteId, controlId]);
  return rows.rows[0];
}

test('every surface works through HAProxy, and each reaches both nodes', { timeout: 600_000 }, async () => {
  const cookie = await adminCookie();
  const fhirHeaders = { 'x-api-key': key, 'content-type': 'application/fhir+json' };
  for (const surface of ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb'] as const) assert.equal((await send(surface, '/readyz')).status, 200, surface);
  // HTTP requests go round the nodes one by one: what a round sends to one origin alternates.
  for (let round = 0; round < 4; round++) {
    const created = await send('fhir', '/fhir/Patient', { method: 'POST', headers: fhirHeaders, body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: `HAP-${round}` }], name: [{ family: 'Quay' }] }) });
    assert.equal(created.status, 201, created.body);
    assert.equal((await send('fhir', `/fhir/Patient/${(JSON.parse(created.body) as { id: string }).id}`, { headers: fhirHeaders })).status, 200);
    const studies = await send('dicomweb', '/studies', { headers: { 'x-api-key': key, accept: 'application/dicom+json' } });
    assert.equal(studies.status, 200, studies.body);
    const v2 = await send('hl7', '/v2/ingest', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'x-application/hl7-v2+er7' }, body: adt({ application: 'HTTP', facility: 'QUAY' }, `HTTP-${round}`, `H-${round}`) });
    assert.equal(v2.status, 200, v2.body);
    const v3 = await send('hl7', '/v3/ingest', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, body: v3Fixture('PIX_FEED_REG_Maximal_Request.xml') });
    assert.equal(v3.status, 200, v3.body);
    const study = `1.2.826.0.1.3680043.10.7.${round}`;
    const step = await send('mpps', '/ingest', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ sop_instance_uid: `${study}.9`, study_uid: study, status: 'IN PROGRESS' }) });
    assert.equal(step.status, 201, step.body);
    assert.equal((await send('connectivity', '/connectivity/dimse', { headers: { 'x-api-key': key } })).status, 200);
    // One session cookie, answered by whichever node gets the request: sessions live in PostgreSQL.
    assert.equal((await send('admin', '/api/sites', { headers: { cookie } })).status, 200);

    const ack = await sendMllp(adt(lab, `MLLP-${round}`, `M-${round}`), { from: labAddress });
    assert.match(ack ?? 'no acknowledgement', /MSA\|AA\|MLLP-/);
    const instance = join(workDir, `instance-${round}.dcm`);
    await writeSyntheticInstance(instance, { study, series: `${study}.1`, instance: `${study}.1.1` }, 4, 4);
    await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'QUAYSIDE', balancer, String(ports.dicom), instance]);
  }
  for (const node of ['node1', 'node2'] as const) {
    const served = requestsServed(node, /^\/(fhir|v2|v3|ingest|connectivity|api|studies)(\/|$)/);
    for (const surface of ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb']) assert.ok((served[surface] ?? 0) > 0, `${node} answered no ${surface} request: ${JSON.stringify(served)}`);
    assert.ok((served.admin ?? 0) > 0 && logEntries(node).some((entry) => entry.msg === 'request completed' && entry.path === '/api/sites' && entry.statusCode === 200), `${node} served the admin session`);
    assert.ok(logEntries(node).some((entry) => entry.surface === 'mllp' && entry.msg === 'HL7 v2 message acknowledged'), `${node} took no MLLP message`);
    assert.ok(logEntries(node).some((entry) => entry.surface === 'dicom' && entry.msg === 'association released'), `${node} took no DICOM association`);
  }
  const stored = await db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [siteId]);
  assert.equal(stored.rows[0]!.n, 4);
});

test("the nodes see the client's address: MLLP allow-list through the PROXY protocol, X-Forwarded-For from the balancer only", { timeout: 120_000 }, async () => {
  // The lab's address is admitted: through the balancer the node sees it, not the balancer's.
  for (let i = 0; i < 2; i++) {
    const ack = await sendMllp(adt(lab, `LAB-${i}`, `L-${i}`), { from: labAddress });
    assert.match(ack ?? 'no acknowledgement', /MSA\|AA\|LAB-/);
    assert.equal((await messageLogRow(`LAB-${i}`))?.remote_address, labAddress);
  }
  // The same message from an address no client admits is refused on every node (connection closed).
  for (let i = 0; i < 2; i++) {
    assert.equal(await sendMllp(adt(lab, `STRANGER-${i}`, `S-${i}`), { from: strangerAddress }), undefined);
    assert.equal(await messageLogRow(`STRANGER-${i}`), undefined);
  }
  // A PROXY header from an address that is not a trusted proxy is not believed: a stranger that
  // claims to be the lab, straight to a node, is still a stranger.
  const spoofed = await sendMllp(adt(lab, 'SPOOF-1', 'S-9'), { from: strangerAddress, host: nodeAddresses.node1, prefix: Buffer.from(`PROXY TCP4 ${labAddress} ${nodeAddresses.node1} 40000 ${ports.mllp}\r\n`) });
  assert.equal(spoofed, undefined);
  assert.equal(await messageLogRow('SPOOF-1'), undefined);

  const headers = { 'x-api-key': key, 'content-type': 'x-application/hl7-v2+er7', 'x-forwarded-for': '10.66.66.66' };
  // Through the balancer: it appends the lab's address; the forged one before it is not believed.
  assert.equal((await send('hl7', '/v2/ingest', { method: 'POST', headers, body: adt(lab, 'XFF-1', 'X-1'), from: labAddress })).status, 200);
  assert.equal((await messageLogRow('XFF-1'))?.remote_address, labAddress);
  // Straight to a node from an untrusted address: its X-Forwarded-For is ignored.
  assert.equal((await send('hl7', '/v2/ingest', { method: 'POST', headers, body: adt(lab, 'XFF-2', 'X-2'), from: strangerAddress, host: nodeAddresses.node2 })).status, 200);
  assert.equal((await messageLogRow('XFF-2'))?.remote_address, strangerAddress);
});

async function restart(node: NodeName): Promise<void> {
  nodes[node] = await startServiceProcess(nodeEnv[node], 8);
}

test('a killed node is taken out by the health check, and traffic goes on through the other', { timeout: 240_000 }, async () => {
  await nodes.node2.stop('SIGKILL');
  await haproxy.waitFor('node2', 'DOWN');
  const fhirHeaders = { 'x-api-key': key };
  for (let i = 0; i < 6; i++) {
    for (const surface of ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb'] as const) assert.equal((await send(surface, '/readyz')).status, 200, surface);
    assert.equal((await send('fhir', '/fhir/Patient?_count=1', { headers: fhirHeaders })).status, 200);
    assert.match((await sendMllp(adt(lab, `DOWN-${i}`, `D-${i}`), { from: labAddress })) ?? 'none', /MSA\|AA\|/);
    await exec('echoscu', ['-aec', 'QUAYSIDE', balancer, String(ports.dicom)]);
  }
  await restart('node2');
  await haproxy.waitFor('node2', 'UP');
});

test('the drain procedure (node-state.sh drain, SIGTERM, restart, ready) loses nothing', { timeout: 300_000 }, async () => {
  const failures: string[] = [];
  const created: string[] = [];
  const messages = new Map<string, number>();
  let running = true;
  // Two FHIR writers and two MLLP senders with connections they keep, as interface engines do.
  const fhirWriter = async (writer: number) => {
    for (let i = 0; running; i++) {
      const answer = await send('fhir', '/fhir/Patient', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/fhir+json' }, body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: `DRAIN-${writer}-${i}` }] }) }).catch((error: Error) => ({ status: 0, body: error.message }));
      if (answer.status === 201) created.push(`DRAIN-${writer}-${i}`);
      else failures.push(`FHIR ${answer.status} ${answer.body.slice(0, 100)}`);
    }
  };
  const mllpSender = async (sender: number) => {
    for (let i = 0; running; i++) {
      const controlId = `DRN-${sender}-${i}`;
      // Sent again until acknowledged (a connection closed by a stopping node is retried).
      for (let attempt = 1; ; attempt++) {
        const ack = await sendMllp(adt(lab, controlId, `DR-${sender}-${i}`), { from: labAddress }).catch(() => undefined);
        if (ack && /MSA\|AA\|/.test(ack)) {
          messages.set(controlId, attempt);
          break;
        }
        if (attempt > 20) throw new Error(`${controlId} never acknowledged`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  const load = [fhirWriter(1), fhirWriter(2), mllpSender(1), mllpSender(2)];
  await new Promise((resolve) => setTimeout(resolve, 2_000));

  const drained = await exec('bash', [nodeStateScript, 'drain', 'node1', '30'], { env: { ...process.env, GATEWAY_LB_SOCKET: haproxy.socket } });
  assert.match(drained.stdout, /node1: drain in 8 backends/);
  assert.match(drained.stdout, /node1: no HTTP request in flight/);
  // The script returned once nothing was in flight there, so a request the node completed after
  // this moment was sent to it after the drain. Counted by the log lines' times, not their number:
  // a node writes its access lines up to 100 ms after the requests (src/server/logger.ts).
  const drainedAt = Date.now();
  const exitCode = await nodes.node1.stop('SIGTERM');
  assert.equal(exitCode, 0, 'the node stopped cleanly');
  assert.equal(requestsServed('node1', /^\/fhir\/Patient$/, drainedAt).fhir ?? 0, 0, 'a drained node gets no new request');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await restart('node1');
  await exec('bash', [nodeStateScript, 'ready', 'node1'], { env: { ...process.env, GATEWAY_LB_SOCKET: haproxy.socket } });
  await haproxy.waitFor('node1', 'UP');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  running = false;
  await Promise.all(load);

  assert.deepEqual(failures, [], 'no HTTP request failed during the drain');
  assert.ok(created.length > 0 && messages.size > 0);
  const patients = await db.database.query<{ identifier: string; n: number }>(
    `SELECT content #>> '{identifier,0,value}' AS identifier, count(*)::int AS n FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient' AND content #>> '{identifier,0,value}' LIKE 'DRAIN-%' GROUP BY 1`,
    [siteId],
  );
  assert.deepEqual(patients.rows.map((row) => row.identifier).sort(), [...created].sort(), 'every acknowledged create is stored');
  assert.ok(patients.rows.every((row) => row.n === 1), 'once');
  const logged = await db.database.query<{ control_id: string; n: number }>(`SELECT control_id, count(*)::int AS n FROM inbound_message WHERE site_id = $1 AND control_id LIKE 'DRN-%' GROUP BY 1`, [siteId]);
  assert.deepEqual(logged.rows.map((row) => row.control_id).sort(), [...messages.keys()].sort(), 'every acknowledged MLLP message is stored');
  assert.ok(logged.rows.every((row) => row.n === 1), 'once');
  // Both nodes served the writers again after the node came back.
  assert.ok((requestsServed('node1', /^\/fhir\/Patient$/).fhir ?? 0) > 0, 'the restarted node takes requests again');
});

