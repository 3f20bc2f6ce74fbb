import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createDicomDestination } from '../../src/domain/imaging/dicom-destinations.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createTestSite } from '../support/sites.ts';
import { dicomFixture, freePort, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';

// Orthanc (Debian package `orthanc`), a PACS nobody here wrote, configured on loopback with the
// service as one of its DICOM modalities; the service has Orthanc as a C-MOVE destination.
const ctStudy = '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322';
const ctInstance = '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322';

let harness: DicomHarness;
let site: SiteContext;
let work: string;
let orthanc: ChildProcess;
let http: string;


async function orthancApi<T>(method: string, path: string, body?: unknown): Promise<T> {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${http}${path}`, { method, ...(body === undefined ? {} : { body: payload }) });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

before(async () => {
  harness = await startHarness();
  site = await createTestSite(harness.db.database);
  const stored = await storescu(harness.listener.port, site.aeTitle, ['CT_small.dcm', 'MR_small.dcm'].map(dicomFixture), ['-xe']);
  assert.equal(stored.code, 0, stored.stderr);

  work = await mkdtemp(join(tmpdir(), 'cg-orthanc-'));
  const [httpPort, dicomPort] = [await freePort(), await freePort()];
  http = `http://127.0.0.1:${httpPort}`;
  const config = join(work, 'orthanc.json');
  await writeFile(
    config,
    JSON.stringify({
      Name: 'test',
      StorageDirectory: join(work, 'storage'),
      IndexDirectory: join(work, 'storage'),
      Plugins: [],
      HttpPort: httpPort,
      RemoteAccessAllowed: false,
      AuthenticationEnabled: false,
      DicomAet: 'ORTHANC',
      DicomPort: dicomPort,
      DicomModalities: { gateway: [site.aeTitle, '127.0.0.1', harness.listener.port] },
      DicomAlwaysAllowStore: true,
      SaveJobs: false,
    }),
  );
  orthanc = spawn('/usr/sbin/Orthanc', [`--logdir=${work}`, config], { stdio: 'ignore' });
  for (let attempt = 0; ; attempt++) {
    const up = await fetch(`${http}/system`).then((response) => response.ok, () => false);
    if (up) break;
    if (attempt > 300) throw new Error('Orthanc did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await createDicomDestination(harness.db.database, site, { aeTitle: 'ORTHANC', host: '127.0.0.1', port: dicomPort });
});
after(async () => {
  orthanc?.kill();
  await harness.stop();
  await rm(work, { recursive: true, force: true });
});

test("Orthanc queries the service (C-FIND) and retrieves a study from it over C-MOVE", async () => {
  const query = await orthancApi<{ ID: string }>('POST', '/modalities/gateway/query', { Level: 'Study', Query: { PatientID: '1CT1', StudyInstanceUID: '' } });
  const answers = await orthancApi<string[]>('GET', `/queries/${query.ID}/answers`);
  assert.equal(answers.length, 1);
  const answer = await orthancApi<Record<string, { Value: string }>>('GET', `/queries/${query.ID}/answers/0/content`);
  assert.equal(answer['0020,000d']?.Value, ctStudy);

  await orthancApi('POST', '/modalities/gateway/move', { Level: 'Study', Resources: [{ StudyInstanceUID: ctStudy }], TargetAet: 'ORTHANC', Synchronous: true });
  const found = await orthancApi<string[]>('POST', '/tools/lookup', ctInstance);
  assert.equal(found.length, 1, 'the instance is in Orthanc');
  const instances = await orthancApi<string[]>('GET', '/instances');
  assert.equal(instances.length, 1, 'only the study asked for was moved');
});
