import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { storescu } from '../dicom/support/dicom-harness.ts';
import { hashFile, writeSyntheticInstance } from '../dicom/support/synthetic-instance.ts';
import { siteWithKey, useDicomwebOrigin } from './support.ts';

const origin = useDicomwebOrigin();
const source = join(tmpdir(), `cg-dicomweb-large-${process.pid}.dcm`);
after(() => rm(source, { force: true }));

test('a 300 MB instance is retrieved over WADO-RS intact while the resident memory of the serving process grows by less than 100 MB', async () => {
  const { site, key } = await siteWithKey(origin);
  const uids = { study: '1.2.826.0.1.3680043.10.997.1', series: '1.2.826.0.1.3680043.10.997.1.1', instance: '1.2.826.0.1.3680043.10.997.1.1.1' };
  // 12800 x 12288 x 16 bits = 300 MiB of pixel data.
  await writeSyntheticInstance(source, uids, 12800, 12288);
  const sent = await storescu(origin.listener.port, site.aeTitle, [source], ['-xe', '--max-pdu', '131072']);
  assert.equal(sent.code, 0, sent.stderr);
  const { rows } = await origin.db.database.query('SELECT storage_path, size_bytes FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [site.siteId, uids.instance]);
  const storedPath = resolveStoredInstance(origin.services.config.dicomStorageDir, rows[0].storage_path);
  const expected = await hashFile(storedPath, 0);

  // Warm-up: the first request loads what a retrieval needs once for the process.
  await (await fetch(`${origin.url}/studies?StudyInstanceUID=${uids.study}`, { headers: { 'x-api-key': key } })).arrayBuffer();

  // The origin runs in this process and the client reads the answer chunk by chunk, hashing the
  // part's bytes without keeping them: RSS growth is what serving the instance costs.
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const hash = createHash('sha256');
  let total = 0;
  try {
    const response = await fetch(`${origin.url}/studies/${uids.study}/series/${uids.series}/instances/${uids.instance}`, { headers: { 'x-api-key': key } });
    assert.equal(response.status, 200);
    const boundary = /boundary=([^;]+)/.exec(response.headers.get('content-type') ?? '')![1]!;
    // Part headers come first; the file follows, then CRLF and the closing delimiter.
    const closing = Buffer.byteLength(`\r\n--${boundary}--\r\n`);
    let head: Buffer | undefined = Buffer.alloc(0) as Buffer;
    let held: Buffer = Buffer.alloc(0);
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      let bytes: Buffer = Buffer.from(chunk);
      if (head) {
        head = Buffer.concat([head, bytes]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) continue;
        bytes = head.subarray(end + 4);
        head = undefined;
      }
      // The last `closing` bytes are not the file's: hold them back until the next chunk.
      const all = Buffer.concat([held, bytes]);
      const keep = Math.min(all.length, closing);
      hash.update(all.subarray(0, all.length - keep));
      total += all.length - keep;
      held = Buffer.from(all.subarray(all.length - keep));
    }
    assert.equal(held.toString('latin1'), `\r\n--${boundary}--\r\n`);
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  const growth = (peak - baseline) / (1024 * 1024);
  console.log(`# RSS baseline ${(baseline / 1048576).toFixed(1)} MiB, peak ${(peak / 1048576).toFixed(1)} MiB, growth ${growth.toFixed(1)} MiB`);
  assert.equal(total, Number(rows[0].size_bytes));
  assert.equal(hash.digest('hex'), expected);
  assert.ok(total > 300 * 1024 * 1024);
  assert.ok(growth < 100, `resident memory grew by ${growth.toFixed(1)} MiB`);
});
