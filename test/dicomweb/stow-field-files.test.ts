import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { test } from 'node:test';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { readPart10Meta } from '../../src/dicomweb/part10-meta.ts';
import { dicomFixture, storescu } from '../dicom/support/dicom-harness.ts';
import { fixture, multipartBody, siteWithKey, stow, useDicomwebOrigin } from './support.ts';

const origin = useDicomwebOrigin();

/** pydicom's RT fixtures: (0002,0003) in the file meta is not the dataset's (0008,0018). */
const misnamed = [
  { file: 'rtdose.dcm', meta: '1.2.999.999.99.9.9999.9999.20030818153516', dataset: '1.9.999.999.99.9.9999.9999.20030818153516' },
  { file: 'rtplan.dcm', meta: '1.2.999.999.99.9.9999.9999.20030903150023', dataset: '1.2.777.777.77.7.7777.7777.20030903150023' },
];

test("a file whose meta names another SOP Instance UID than its dataset is stored under the dataset's, the same instance as over C-STORE", async () => {
  const { site, key } = await siteWithKey(origin);
  const response = await stow(origin, key, misnamed.map(({ file }) => fixture(file)));
  assert.equal(response.status, 200, await response.clone().text());
  const result = (await response.json()) as Record<string, { Value?: Record<string, { Value: unknown[] }>[] }>;
  assert.deepEqual(result['00081199']!.Value!.map((item) => item['00081155']!.Value[0]), misnamed.map(({ dataset }) => dataset));
  for (const { dataset, meta } of misnamed) {
    const { rows } = await origin.db.database.query('SELECT storage_path FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = ANY($2)', [site.siteId, [dataset, meta]]);
    assert.equal(rows.length, 1, 'one instance, under the dataset UID only');
    const stored = readPart10Meta(await readFile(resolveStoredInstance(origin.services.config.dicomStorageDir, rows[0].storage_path)));
    assert.ok(typeof stored === 'object' && 'sopInstanceUid' in stored);
    assert.equal(stored.sopInstanceUid, dataset, 'the stored file has a meta header of its own, naming the dataset');
  }
  // C-STORE never sees the sender's meta: the same files over DIMSE, in their own transfer syntax
  // (implicit VR; -xi keeps storescu from converting them), are the same instances.
  const sent = await storescu(origin.listener.port, site.aeTitle, misnamed.map(({ file }) => dicomFixture(file)), ['-xi']);
  assert.equal(sent.code, 0, sent.stdout + sent.stderr);
  const { rows } = await origin.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, misnamed.length);
});

test('every STOW-RS answer on one kept-alive connection names the origin in its Retrieve URLs', async () => {
  const { key } = await siteWithKey(origin);
  const { port } = new URL(origin.url);
  const { body, contentType } = multipartBody([{ contentType: 'application/dicom', body: fixture('CT_small.dcm') }]);
  const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
  const sockets = new Set<unknown>();
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const outgoing = request({ host: '127.0.0.1', port, path: '/studies', method: 'POST', agent, headers: { 'x-api-key': key, 'content-type': contentType, accept: 'application/dicom+json', 'content-length': body.length } }, (incoming) => {
          sockets.add(incoming.socket);
          let text = '';
          incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: incoming.statusCode ?? 0, text }));
        });
        outgoing.on('error', reject).end(body);
      });
      assert.equal(answer.status, 200);
      const urls = [...answer.text.matchAll(/"Value":\["([a-z]+:\/\/[^"]+)"\]/g)].map((match) => match[1]!);
      assert.ok(urls.length >= 2, answer.text);
      for (const url of urls) assert.ok(url.startsWith(`${origin.url}/studies/`), `request ${attempt + 1}: ${url}`);
    }
    assert.equal(sockets.size, 1, 'the requests shared one connection');
  } finally {
    agent.destroy();
  }
});
