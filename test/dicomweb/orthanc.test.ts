import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { datasetOf } from '../dicom/support/dicom-harness.ts';
import { fixture, siteWithKey, stow, useDicomwebOrigin } from './support.ts';

// Orthanc (Debian packages orthanc and orthanc-dicomweb) with its DICOMweb client plugin pointed
// at the service: a peer nobody here wrote, retrieving a study over WADO-RS.
const orthancBinary = '/usr/sbin/Orthanc';
const dicomwebPlugin = '/usr/share/orthanc/plugins/libOrthancDicomWeb.so';

const origin = useDicomwebOrigin();
let orthanc: ChildProcess | undefined;
let workDir: string | undefined;
let orthancUrl: string;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function startOrthanc(servers: Record<string, unknown>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'cg-orthanc-'));
  workDir = dir;
  const port = await freePort();
  orthancUrl = `http://127.0.0.1:${port}`;
  const config = join(dir, 'orthanc.json');
  await writeFile(
    config,
    JSON.stringify({
      Name: 'interop',
      StorageDirectory: join(dir, 'storage'),
      IndexDirectory: join(dir, 'storage'),
      Plugins: [dicomwebPlugin],
      HttpPort: port,
      RemoteAccessAllowed: false,
      AuthenticationEnabled: false,
      DicomServerEnabled: false,
      DicomWeb: { Enable: true, Root: '/dicom-web/', Servers: servers },
    }),
  );
  orthanc = spawn(orthancBinary, [`--logdir=${dir}`, config], { stdio: 'ignore' });
  for (let attempt = 0; attempt < 200; attempt++) {
    const ready = await fetch(`${orthancUrl}/system`).then((response) => response.ok, () => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('Orthanc did not start within 20 s');
}

after(async () => {
  if (orthanc && orthanc.exitCode === null) {
    const exited = new Promise((resolve) => orthanc!.once('exit', resolve));
    orthanc.kill('SIGTERM');
    await exited;
  }
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

test('Orthanc, with the service as a DICOMweb server, finds a study over QIDO-RS and retrieves it over WADO-RS', async () => {
  const { key } = await siteWithKey(origin);
  await startOrthanc({ gateway: { Url: `${origin.url}/`, HttpHeaders: { 'X-API-Key': key } } });
  const study = '1.3.6.1.4.1.5962.1.2.4.20040826185059.5457';
  assert.equal((await stow(origin, key, [fixture('MR_small.dcm')])).status, 200);

  const found = await fetch(`${orthancUrl}/dicom-web/servers/gateway/get`, {
    method: 'POST',
    body: JSON.stringify({ Uri: '/studies', Arguments: { StudyInstanceUID: study } }),
  });
  assert.equal(found.status, 200, await found.clone().text());
  const studies = (await found.json()) as Record<string, { Value: unknown[] }>[];
  assert.equal(studies[0]!['0020000D']!.Value[0], study);

  const retrieved = await fetch(`${orthancUrl}/dicom-web/servers/gateway/retrieve`, {
    method: 'POST',
    body: JSON.stringify({ Resources: [{ Study: study }], Synchronous: true }),
  });
  assert.equal(retrieved.status, 200, await retrieved.clone().text());
  const instances = (await (await fetch(`${orthancUrl}/instances`)).json()) as string[];
  assert.equal(instances.length, 1);
  const file = Buffer.from(await (await fetch(`${orthancUrl}/instances/${instances[0]}/file`)).arrayBuffer());
  assert.ok(datasetOf(file).length > 0);
  const tags = (await (await fetch(`${orthancUrl}/instances/${instances[0]}/simplified-tags`)).json()) as Record<string, string>;
  assert.equal(tags.SOPInstanceUID, '1.3.6.1.4.1.5962.1.1.4.1.1.20040826185059.5457');
  assert.equal(tags.PatientName, 'CompressedSamples^MR1');
});
