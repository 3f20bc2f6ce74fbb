import { test } from 'node:test';
import { fixture, siteWithKey, stow, useDicomwebOrigin } from './test/dicomweb/support.ts';
import { renderStoredInstance } from './src/domain/imaging/rendering/render-stored-instance.ts';
const origin = useDicomwebOrigin();
test('x', async () => {
  const { key, site } = await siteWithKey(origin);
  await stow(origin, key, [fixture('CT_small.dcm')]);
  const path = '/studies/1.3.6.1.4.1.5962.1.2.1.20040119072730.12322/series/1.3.6.1.4.1.5962.1.3.1.1.20040119072730.12322/instances/1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322';
  const time = async (label: string, suffix: string) => {
    await fetch(`${origin.url}${path}${suffix}`, { headers: { 'x-api-key': key } }).then((r) => r.arrayBuffer());
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) await Promise.all([1, 2, 3, 4].map(() => fetch(`${origin.url}${path}${suffix}`, { headers: { 'x-api-key': key, accept: suffix.includes('meta') ? 'application/dicom+json' : 'image/jpeg' } }).then((r) => r.arrayBuffer())));
    console.log(label, ((performance.now() - t0) / 40).toFixed(1), 'ms per request at 4');
  };
  await time('metadata', '/metadata');
  await time('thumbnail', '/thumbnail');
  const { rows } = await origin.db.database.query('SELECT storage_path, size_bytes, transfer_syntax_uid FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  const inst = { storagePath: rows[0].storage_path, sizeBytes: Number(rows[0].size_bytes), transferSyntaxUid: rows[0].transfer_syntax_uid };
  const t0 = performance.now();
  for (let i = 0; i < 10; i++) await Promise.all([1, 2, 3, 4].map(() => renderStoredInstance(origin.services.config.dicomStorageDir, inst, { mediaType: 'image/jpeg', frameNumber: 1, quality: 90, viewport: { width: 256, height: 256, enlarge: false } })));
  console.log('render only', ((performance.now() - t0) / 40).toFixed(1));
});
