import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/env.ts';
import { renderJsonError, type HttpSurface } from '../../src/platform/http/surface.ts';
import { startGateway } from '../../src/server/gateway.ts';
import type { SurfaceCatalogue } from '../../src/server/surfaces.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

const silent = pino({ level: 'silent' });

// A slow route shows that stopping waits for work in flight.
function probe(name: 'fhir' | 'mpps'): HttpSurface {
  return {
    name,
    title: name,
    description: 'probe',
    auth: 'api-key',
    renderError: renderJsonError,
    async register(app) {
      app.get(`/${name}/slow`, { config: { public: true } }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        return { done: true };
      });
    },
  };
}
const catalogue: SurfaceCatalogue = { http: [{ surface: probe('fhir'), port: 'fhir' }, { surface: probe('mpps'), port: 'mpps' }], tcp: [] };

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

function freshConfig(extra: NodeJS.ProcessEnv = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-gateway-'));
  return loadConfig({
    CG_DATABASE_URL: db.connectionString,
    CG_DATA_DIR: dataDir,
    CG_FHIR_PORT: '0',
    CG_MPPS_PORT: '0',
    CG_HL7_PORT: '',
    CG_CONNECTIVITY_PORT: '',
    CG_ADMIN_PORT: '',
    CG_DICOMWEB_PORT: '',
    CG_MLLP_PORT: '',
    CG_DICOM_PORT: '',
    ...extra,
  });
}

test('each surface gets its own origin; a blank port starts nothing; paths of another surface are 404', async () => {
  const gateway = await startGateway(freshConfig(), silent, catalogue);
  try {
    assert.deepEqual(gateway.listening.map((s) => s.name).sort(), ['fhir', 'mpps']);
    const fhir = gateway.listening.find((s) => s.name === 'fhir')!;
    const mpps = gateway.listening.find((s) => s.name === 'mpps')!;
    assert.notEqual(fhir.port, mpps.port);
    assert.equal((await fetch(`http://127.0.0.1:${fhir.port}/fhir/slow`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${mpps.port}/fhir/slow`)).status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${fhir.port}/mpps/slow`)).status, 404);
    for (const surface of gateway.listening) {
      assert.equal((await fetch(`http://127.0.0.1:${surface.port}/healthz`)).status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${surface.port}/readyz`)).status, 200);
    }
  } finally {
    await gateway.stop();
  }
});

test('a second service on the same data directory is refused with a clear message', async () => {
  const config = freshConfig();
  const first = await startGateway(config, silent, catalogue);
  try {
    await assert.rejects(startGateway({ ...config, ports: { ...config.ports } }, silent, catalogue), /in use by another Clinical Gateway service \(pid \d+\)/);
  } finally {
    await first.stop();
  }
  // Once stopped, the directory is free again.
  const again = await startGateway(config, silent, catalogue);
  await again.stop();
});

test('the first start creates a service admin whose password file only the owner can read', async () => {
  const empty = await createTestDatabase();
  try {
    const config = freshConfig({ CG_DATABASE_URL: empty.connectionString });
    const gateway = await startGateway(config, silent, catalogue);
    await gateway.stop();
    const file = join(config.dataDir, 'initial-admin-password');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(readFileSync(file, 'utf8').trim().length >= 20);
    const { rows } = await empty.database.query<{ email: string; role: string }>('SELECT email, role FROM app_user');
    assert.deepEqual(rows, [{ email: 'admin@localhost', role: 'service-admin' }]);
    // A second start does not create another.
    const second = await startGateway(freshConfig({ CG_DATABASE_URL: empty.connectionString }), silent, catalogue);
    await second.stop();
    assert.equal((await empty.database.query('SELECT 1 FROM app_user')).rowCount, 1);
  } finally {
    await empty.drop();
  }
});

test('stop() lets a request in flight finish', async () => {
  const gateway = await startGateway(freshConfig(), silent, catalogue);
  const fhir = gateway.listening.find((s) => s.name === 'fhir')!;
  const inFlight = fetch(`http://127.0.0.1:${fhir.port}/fhir/slow`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  await gateway.stop();
  const response = await inFlight;
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { done: true });
  await assert.rejects(fetch(`http://127.0.0.1:${fhir.port}/healthz`));
});

test('with CG_TLS_CERT and CG_TLS_KEY every HTTP origin serves HTTPS', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const gateway = await startGateway(freshConfig({ CG_TLS_CERT: cert, CG_TLS_KEY: key }), silent, catalogue);
  try {
    for (const surface of gateway.listening) {
      assert.equal(surface.protocol, 'https');
      const body = await new Promise<string>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port: surface.port, path: '/healthz', ca: readFileSync(cert) }, (res) => {
          let data = '';
          res.on('data', (chunk) => (data += chunk));
          res.on('end', () => resolve(data));
        });
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual(JSON.parse(body), { status: 'ok' });
      // Plain HTTP is not served on a TLS origin.
      await assert.rejects(fetch(`http://127.0.0.1:${surface.port}/healthz`));
    }
  } finally {
    await gateway.stop();
  }
});

test('configuration errors are specific', () => {
  assert.throws(() => loadConfig({ CG_FHIR_PORT: 'eighty' }), /CG_FHIR_PORT must be a port number/);
  assert.throws(() => loadConfig({ CG_TLS_CERT: '/x' }), /must be set together/);
  assert.throws(() => loadConfig({ CG_TLS_CERT: '/nonexistent', CG_TLS_KEY: '/nonexistent' }), /cannot read the TLS certificate/);
  assert.throws(() => loadConfig({ CG_DOCS: 'maybe' }), /CG_DOCS must be on or off/);
  assert.throws(() => loadConfig({ CG_LOG_LEVEL: 'loud' }), /CG_LOG_LEVEL must be one of/);
  const config = loadConfig({ CG_HL7_PORT: '', CG_BIND: '0.0.0.0' });
  assert.equal(config.ports.hl7, undefined);
  assert.equal(config.ports.fhir, 8080);
  assert.deepEqual(config.dicomPublic, { host: '127.0.0.1', port: 11112 });
});

test('CG_WORKERS: one worker per CPU this process may use unless set; a whole number from 1 to 256', () => {
  assert.equal(loadConfig({}).workers, availableParallelism());
  assert.equal(loadConfig({ CG_WORKERS: ' 3 ' }).workers, 3);
  assert.equal(loadConfig({ CG_WORKERS: '1' }).workers, 1);
  for (const value of ['0', '-2', '1.5', 'many', '257']) assert.throws(() => loadConfig({ CG_WORKERS: value }), /CG_WORKERS must be a whole number from 1 to 256/);
});
