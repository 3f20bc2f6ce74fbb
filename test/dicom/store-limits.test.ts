import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startDicomListener, type DicomListener } from '../../src/dicom/listener.ts';
import { createTestSite } from '../support/sites.ts';
import { startHarness, storescu, transferFiles, type DicomHarness } from './support/dicom-harness.ts';
import { writeSyntheticInstance } from './support/synthetic-instance.ts';

/** Issue 26 point 13: a C-STORE's size and the free disk it may leave are bounded. */

let harness: DicomHarness;
let files: string;
let large: string;
let small: string;
before(async () => {
  harness = await startHarness();
  files = await mkdtemp(join(tmpdir(), 'cg-store-limits-'));
  const uids = (n: number) => ({ study: `1.2.826.0.1.3680043.10.26.${n}`, series: `1.2.826.0.1.3680043.10.26.${n}.1`, instance: `1.2.826.0.1.3680043.10.26.${n}.1.1` });
  large = join(files, 'large.dcm');
  small = join(files, 'small.dcm');
  await writeSyntheticInstance(large, uids(1), 256, 256); // 128 KiB of pixel data
  await writeSyntheticInstance(small, uids(2), 16, 16);
});
after(async () => {
  await harness.stop();
  await rm(files, { recursive: true, force: true });
});

async function withListener(options: { maxInstanceBytes?: number; minFreeDiskBytes?: number }, run: (listener: DicomListener) => Promise<void>) {
  const listener = await startDicomListener(harness.services, { host: '127.0.0.1', port: 0, ...options });
  try {
    await run(listener);
  } finally {
    await listener.close();
  }
}

/** The DIMSE status of each store response, as storescu -d prints them. */
function statuses(log: string): string[] {
  return [...log.matchAll(/DIMSE Status\s*: (0x[0-9a-f]{4})/g)].map((match) => match[1]!);
}

async function storedInstances(siteId: string): Promise<string[]> {
  const { rows } = await harness.db.database.query<{ sop_instance_uid: string }>('SELECT sop_instance_uid FROM imaging_instance WHERE site_id = $1 ORDER BY 1', [siteId]);
  return rows.map((row) => row.sop_instance_uid);
}

test('an instance over CG_DICOM_MAX_INSTANCE_SIZE gets out-of-resources (0xA700), nothing of it is kept, and the association goes on', () =>
  withListener({ maxInstanceBytes: 64 * 1024 }, async (listener) => {
    const site = await createTestSite(harness.db.database);
    // One association: the large instance, then the small one.
    const result = await storescu(listener.port, site.aeTitle, [large, small], ['-d', '--no-halt']);
    assert.deepEqual(statuses(result.stderr), ['0xa700', '0x0000'], result.stderr);
    assert.match(result.stderr, /data set over the 65536-byte limit/);
    assert.deepEqual(await storedInstances(site.siteId), ['1.2.826.0.1.3680043.10.26.2.1.1']);
    assert.deepEqual(await transferFiles(harness.dataDir), []);
  }));

test('below the CG_DICOM_MIN_FREE_DISK floor every C-STORE gets out-of-resources, and nothing is stored', () =>
  withListener({ minFreeDiskBytes: Number.MAX_SAFE_INTEGER }, async (listener) => {
    const site = await createTestSite(harness.db.database);
    const result = await storescu(listener.port, site.aeTitle, [small], ['-d']);
    assert.deepEqual(statuses(result.stderr), ['0xa700'], result.stderr);
    assert.match(result.stderr, /storage is nearly full/);
    assert.deepEqual(await storedInstances(site.siteId), []);
  }));
