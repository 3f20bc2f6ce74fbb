import assert from 'node:assert/strict';
import { unlink } from 'node:fs/promises';
import { test } from 'node:test';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { fixture, parseMultipart, siteWithKey, stow, useDicomwebOrigin, type DicomwebOrigin } from './support.ts';

const origin = useDicomwebOrigin({ CG_DICOM_FILE_CACHE_SIZE: '64MiB' }, { metrics: true });

const ct = { study: '1.3.6.1.4.1.5962.1.2.1.20040119072730.12322', instance: '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322' };

async function retrieveStudy(served: DicomwebOrigin, key: string): Promise<Buffer> {
  const response = await fetch(`${served.url}/studies/${ct.study}`, { headers: { 'x-api-key': key, accept: 'multipart/related; type="application/dicom"' } });
  assert.equal(response.status, 200);
  const parts = parseMultipart(Buffer.from(await response.arrayBuffer()), response.headers.get('content-type') ?? '');
  assert.equal(parts.length, 1);
  return parts[0]!.body;
}

async function lookups(served: DicomwebOrigin): Promise<Record<string, number>> {
  const metric = await served.services.metrics!.registry.getSingleMetric('cg_dicom_file_cache_lookups_total')!.get();
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.outcome), value.value]));
}

test('WADO-RS answers a study read again from the stored-file cache, and a file stored again under the same name afresh', async () => {
  const { site, key } = await siteWithKey(origin);
  const first = fixture('CT_small.dcm');
  assert.equal((await stow(origin, key, [first])).status, 200);
  const stored = await retrieveStudy(origin, key);
  assert.deepEqual(await lookups(origin), { miss: 1 });
  assert.ok((await retrieveStudy(origin, key)).equals(stored));
  assert.deepEqual(await lookups(origin), { miss: 1, hit: 1 });

  // The instance purged (its row and its file, as a site purge does) and a different dataset with
  // the same UIDs stored in its place: same name, same size, a new index row.
  const { rows } = await origin.db.database.query<{ storage_path: string }>('DELETE FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2 RETURNING storage_path', [site.siteId, ct.instance]);
  await unlink(resolveStoredInstance(origin.services.config.dicomStorageDir, rows[0]!.storage_path));
  const second = Buffer.from(first);
  second[second.length - 1] ^= 0xff;
  assert.equal((await stow(origin, key, [second])).status, 200);
  const restored = await retrieveStudy(origin, key);
  assert.equal(restored.length, stored.length);
  assert.ok(!restored.equals(stored), 'the bytes of the purged instance were sent');
  assert.equal(restored.at(-1), second.at(-1));
  assert.deepEqual(await lookups(origin), { miss: 2, hit: 1 });
});

const withoutCache = useDicomwebOrigin({}, { metrics: true });

test('with CG_DICOM_FILE_CACHE_SIZE unset there is no cache: nothing is looked up or held', async () => {
  const { key } = await siteWithKey(withoutCache);
  assert.equal((await stow(withoutCache, key, [fixture('CT_small.dcm')])).status, 200);
  for (let i = 0; i < 2; i++) await retrieveStudy(withoutCache, key);
  assert.deepEqual(await lookups(withoutCache), {});
});
