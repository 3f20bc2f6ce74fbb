import assert from 'node:assert/strict';
import { open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestSite } from '../support/sites.ts';
import { dicomFixture, listFiles, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';
import { hashFile, writeSyntheticInstance } from './support/synthetic-instance.ts';

let harness: DicomHarness;
const source = join(tmpdir(), `cg-large-${process.pid}.dcm`);
before(async () => {
  harness = await startHarness();
});
after(async () => {
  await harness.stop();
  await rm(source, { force: true });
});

test('a 300 MB instance is stored intact while the resident memory of the listener process grows by less than 100 MB', async () => {
  const site = await createTestSite(harness.db.database);
  const uids = { study: '1.2.826.0.1.3680043.10.998.1', series: '1.2.826.0.1.3680043.10.998.1.1', instance: '1.2.826.0.1.3680043.10.998.1.1.1' };
  // 12800 x 12288 x 16 bits = 300 MiB of pixel data.
  const { datasetOffset } = await writeSyntheticInstance(source, uids, 12800, 12288);
  const expectedHash = await hashFile(source, datasetOffset);

  // Warm-up: the first stored instance loads what indexing needs once for the process (the
  // patient registry loads the FHIR definitions, ~100 MB). The measure is then what one more
  // instance costs, which is what grows with instance size.
  const warmUp = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('CT_small.dcm')], ['-xe']);
  assert.equal(warmUp.code, 0, warmUp.stderr);

  // The listener runs in this process: sample its RSS while storescu (a child process) sends.
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  let result;
  try {
    result = await storescu(harness.listener.port, site.aeTitle, [source], ['-v', '-xe', '--max-pdu', '131072']);
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /Received Store Response \(Success\)/);

  const growth = (peak - baseline) / (1024 * 1024);
  // Reported for the record (the figure, not its speed, is the requirement).
  console.log(`# RSS baseline ${(baseline / 1048576).toFixed(1)} MiB, peak ${(peak / 1048576).toFixed(1)} MiB, growth ${growth.toFixed(1)} MiB`);
  assert.ok(growth < 100, `resident memory grew by ${growth.toFixed(1)} MiB`);

  const stored = (await listFiles(join(harness.dataDir, 'dicom', site.siteId))).filter((path) => path.includes(uids.study));
  assert.equal(stored.length, 1);
  const { rows } = await harness.db.database.query('SELECT size_bytes, sha256, storage_path FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [site.siteId, uids.instance]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].sha256, expectedHash);
  assert.equal(Number(rows[0].size_bytes), (await stat(stored[0]!)).size);
  assert.ok(Number(rows[0].size_bytes) > 300 * 1024 * 1024);
  // The stored file's dataset (after its own file meta group) is byte for byte the sent one.
  const head = Buffer.alloc(144);
  const handle = await open(stored[0]!, 'r');
  try {
    await handle.read(head, 0, 144, 0);
  } finally {
    await handle.close();
  }
  assert.equal(head.toString('latin1', 128, 132), 'DICM');
  assert.equal(await hashFile(stored[0]!, 144 + head.readUInt32LE(140)), expectedHash);
});
