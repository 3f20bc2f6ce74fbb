// Data lifecycle, disk safety: below the free-space floor every surface refuses new data with its
// own retry-later answer and writes nothing; reads go on; /readyz says "degraded"; above the floor
// again, everything is accepted. The floor is played by the guard's reading of free space.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config/env.ts';
import { startDicomListener, type DicomListener } from '../../src/dicom/listener.ts';
import { dicomwebSurface } from '../../src/dicomweb/surface.ts';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { frame } from '../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../src/hl7v2/mllp/listener.ts';
import { mppsSurface } from '../../src/mpps/surface.ts';
import { startDiskSpaceGuard, type DiskSpaceGuard, type FreeSpace } from '../../src/platform/disk-space/disk-space-guard.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import type { Services } from '../../src/platform/services.ts';
import { hl7Surface } from '../../src/server/hl7-origin.ts';
import { startHarness, storescu, transferFiles, dicomFixture, type DicomHarness } from '../dicom/support/dicom-harness.ts';
import { multipartBody, fixture } from '../dicomweb/support.ts';
import { message } from '../hl7v2/support.ts';
import { msa, RawPeer } from '../hl7v2/mllp/support.ts';
import { minimalAdd } from '../hl7v3/support.ts';
import { createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';

const total = 100 * 2 ** 30;
let free = 50 * 2 ** 30;
const logs: { level: number; msg: string }[] = [];
let harness: DicomHarness;
let guard: DiskSpaceGuard;
let services: Services;
let origins: Record<'fhir' | 'hl7' | 'mpps' | 'dicomweb', FastifyInstance>;
let mllp: RunningMllpListener;
let dicom: DicomListener;
let site: SiteContext;
let key: string;

before(async () => {
  harness = await startHarness();
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) });
  guard = await startDiskSpaceGuard({
    folders: ['/data', '/dicom'],
    settings: { minFreeBytes: 2 ** 30, minFreePercent: 0, checkIntervalMs: 20 },
    logger,
    readFreeSpace: async (folder): Promise<FreeSpace> => ({ freeBytes: folder === '/dicom' ? free : total, totalBytes: total }),
  });
  services = { ...harness.services, diskSpace: guard };
  origins = {
    fhir: await createOrigin(fhirSurface, services),
    hl7: await createOrigin(hl7Surface, services),
    mpps: await createOrigin(mppsSurface, services),
    dicomweb: await createOrigin(dicomwebSurface, services),
  };
  mllp = await startMllpListener(services, { host: '127.0.0.1', port: 0 });
  dicom = await startDicomListener(services, { host: '127.0.0.1', port: 0 });
  site = await createTestSite(harness.db.database);
  key = await createTestApiKey(harness.db.database, site);
  await createIntegrationClient(harness.db.database, site.siteId, { name: 'lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.1' }, { kind: 'operator' });
});
after(async () => {
  guard.stop();
  await mllp.close();
  await dicom.close();
  await Promise.all(Object.values(origins).map((origin) => origin.close()));
  await harness.stop();
});

async function setFree(bytes: number): Promise<void> {
  free = bytes;
  const low = bytes < 2 ** 30;
  for (let i = 0; i < 500 && (guard.shortage() !== undefined) !== low; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(guard.shortage() !== undefined, low);
}

const headers = (contentType: string) => ({ 'x-api-key': key, 'content-type': contentType });

/** One item of new data for every surface; each answer as the test reads it. */
async function sendEverything() {
  const patient = await origins.fhir.inject({ method: 'POST', url: '/fhir/Patient', headers: headers('application/fhir+json'), payload: { resourceType: 'Patient', name: [{ family: 'Floor' }] } });
  const v2 = await origins.hl7.inject({ method: 'POST', url: '/v2/ingest', headers: headers('text/plain'), payload: message(['PID|1||MRN-' + randomUUID().slice(0, 8) + '^^^HOSP^MR||Floor^Ann']) });
  const v3 = await origins.hl7.inject({ method: 'POST', url: '/v3/ingest', headers: headers('application/hl7-v3+xml'), payload: minimalAdd(`<id root="1.2.3.4" extension="V3-${randomUUID().slice(0, 8)}"/>`) });
  const step = await origins.mpps.inject({
    method: 'POST',
    url: '/ingest',
    headers: headers('application/json'),
    payload: JSON.stringify({ sop_instance_uid: `2.25.${BigInt('0x' + randomUUID().replace(/-/g, ''))}`, study_uid: '1.2.3.4.5', status: 'IN PROGRESS', modality: 'CT' }),
  });
  const stowBody = multipartBody([{ contentType: 'application/dicom', body: fixture('CT_small.dcm') }]);
  const stow = await origins.dicomweb.inject({ method: 'POST', url: '/studies', headers: { 'x-api-key': key, 'content-type': stowBody.contentType, accept: 'application/dicom+json' }, payload: stowBody.body });
  const peer = await RawPeer.open(mllp.port);
  peer.write(frame(message(['PID|1||MLLP-' + randomUUID().slice(0, 8) + '^^^HOSP^MR||Floor^Bo'])));
  const mllpAck = msa(await peer.next());
  peer.socket.end();
  const store = await storescu(dicom.port, site.aeTitle, [dicomFixture('MR_small.dcm')], ['-d']);
  const cStore = [...store.stderr.matchAll(/DIMSE Status\s*: (0x[0-9a-f]{4})/g)].map((match) => match[1]);
  return { patient, v2, v3, step, stow, mllpAck, cStore };
}

async function rowsOfSite(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['clinical_resource', 'inbound_message', 'imaging_procedure_step', 'imaging_instance']) {
    const { rows } = await harness.db.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE site_id = $1`, [site.siteId]);
    counts[table] = rows[0]!.n;
  }
  return counts;
}

test('below the floor every surface answers retry-later, nothing is written, reads and /readyz go on; above it again all is accepted', async () => {
  await setFree(2 ** 29);
  assert.equal(logs.filter((line) => /below the floor/.test(line.msg)).length, 1);

  const refused = await sendEverything();
  assert.equal(refused.patient.statusCode, 503);
  assert.equal(refused.patient.headers['retry-after'], '30');
  const outcome = refused.patient.json();
  assert.equal(outcome.resourceType, 'OperationOutcome');
  assert.equal(outcome.issue[0].code, 'transient');
  assert.match(outcome.issue[0].diagnostics, /free disk space/);
  assert.equal(refused.v2.statusCode, 503);
  assert.ok(refused.v2.headers['retry-after']);
  assert.match(refused.v2.body, /"ack_code":"AR"|"AR"/);
  assert.match(refused.v2.body, /disk/);
  assert.equal(refused.v3.statusCode, 503);
  assert.match(refused.v3.body, /<typeCode code="AR"\/>/);
  assert.match(refused.v3.body, /free disk space/);
  assert.equal(refused.step.statusCode, 503);
  assert.ok(refused.step.headers['retry-after']);
  assert.equal(refused.stow.statusCode, 503);
  assert.equal(refused.stow.headers['retry-after'], '30');
  assert.equal(refused.mllpAck.code, 'AR');
  assert.deepEqual(refused.cStore, ['0xa700']);
  // Nothing half-written: no row of the site in any table new data goes to, no transfer file left.
  assert.deepEqual(await rowsOfSite(), { clinical_resource: 0, inbound_message: 0, imaging_procedure_step: 0, imaging_instance: 0 });
  assert.deepEqual(await transferFiles(harness.dataDir), []);

  // Reads go on: a search, the FHIR metadata, a QIDO query; /readyz is 200 "degraded".
  assert.equal((await origins.fhir.inject({ method: 'GET', url: '/fhir/Patient', headers: { 'x-api-key': key } })).statusCode, 200);
  assert.equal((await origins.fhir.inject({ method: 'POST', url: '/fhir/Patient/_search', headers: headers('application/x-www-form-urlencoded'), payload: 'name=Floor' })).statusCode, 200);
  assert.equal((await origins.dicomweb.inject({ method: 'GET', url: '/studies', headers: { 'x-api-key': key, accept: 'application/dicom+json' } })).statusCode, 200);
  const ready = await origins.fhir.inject({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200);
  assert.equal(ready.json().status, 'degraded');
  assert.match(ready.json().reason, /free disk space/);
  assert.equal(ready.json().disk.free_bytes, 2 ** 29);
  // Unauthenticated writes still get their 401, not the node's state.
  assert.equal((await origins.fhir.inject({ method: 'POST', url: '/fhir/Patient', headers: { 'content-type': 'application/fhir+json' }, payload: '{}' })).statusCode, 401);

  await setFree(20 * 2 ** 30);
  assert.equal(logs.filter((line) => /back above the floor/.test(line.msg)).length, 1);
  assert.equal((await origins.fhir.inject({ method: 'GET', url: '/readyz' })).json().status, 'ready');
  const accepted = await sendEverything();
  assert.equal(accepted.patient.statusCode, 201, accepted.patient.body);
  assert.equal(accepted.v2.statusCode, 200, accepted.v2.body);
  assert.equal(accepted.v3.statusCode, 200, accepted.v3.body);
  assert.equal(accepted.step.statusCode, 201, accepted.step.body);
  assert.equal(accepted.stow.statusCode, 200, accepted.stow.body);
  assert.equal(accepted.mllpAck.code, 'AA');
  assert.deepEqual(accepted.cStore, ['0x0000']);
  // Entering and leaving were each said once, however many messages were refused.
  assert.equal(logs.filter((line) => /below the floor/.test(line.msg)).length, 1);
});

test('a percentage floor counts against the file system\'s size', async () => {
  const silent = pino({ level: 'silent' });
  const percent = await startDiskSpaceGuard({
    folders: ['/x'],
    settings: { minFreeBytes: 0, minFreePercent: 10, checkIntervalMs: 60_000 },
    logger: silent,
    readFreeSpace: async () => ({ freeBytes: 9 * 2 ** 30, totalBytes: 100 * 2 ** 30 }),
  });
  assert.deepEqual(percent.shortage(), { folder: '/x', freeBytes: 9 * 2 ** 30, floorBytes: 10 * 2 ** 30 });
  percent.stop();
  const off = await startDiskSpaceGuard({ folders: ['/x'], settings: { minFreeBytes: 0, minFreePercent: 0, checkIntervalMs: 60_000 }, logger: silent, readFreeSpace: async () => ({ freeBytes: 0, totalBytes: 1 }) });
  assert.equal(off.shortage(), undefined);
  off.stop();
});

test('an unreadable folder is not taken for a full one', async () => {
  const unreadable = await startDiskSpaceGuard({
    folders: ['/x'],
    settings: { minFreeBytes: 1, minFreePercent: 0, checkIntervalMs: 60_000 },
    logger: pino({ level: 'silent' }),
    readFreeSpace: async () => {
      throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
    },
  });
  assert.equal(unreadable.shortage(), undefined);
  unreadable.stop();
});

test('bad floor settings are refused at start-up', () => {
  for (const [variable, value] of [
    ['CG_MIN_FREE_DISK', 'lots'],
    ['CG_MIN_FREE_DISK', '-1GB'],
    ['CG_MIN_FREE_DISK_PERCENT', '100'],
    ['CG_MIN_FREE_DISK_PERCENT', '5%'],
    ['CG_MIN_FREE_DISK_PERCENT', '-2'],
    ['CG_DISK_CHECK_INTERVAL_SECONDS', '0'],
    ['CG_DISK_CHECK_INTERVAL_SECONDS', '3601'],
    ['CG_DISK_CHECK_INTERVAL_SECONDS', '1.5'],
  ] as const) {
    assert.throws(() => loadConfig({ [variable]: value }), (error: unknown) => error instanceof ConfigError && error.message.includes(variable), `${variable}=${value}`);
  }
  const config = loadConfig({ CG_MIN_FREE_DISK: '2GiB', CG_MIN_FREE_DISK_PERCENT: '2.5', CG_DISK_CHECK_INTERVAL_SECONDS: '10' });
  assert.deepEqual(config.diskSpace, { minFreeBytes: 2 * 2 ** 30, minFreePercent: 2.5, checkIntervalMs: 10_000 });
  assert.deepEqual(loadConfig({}).diskSpace, { minFreeBytes: 256 * 2 ** 20, minFreePercent: 0, checkIntervalMs: 5_000 });
});
