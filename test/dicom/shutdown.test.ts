import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestSite } from '../support/sites.ts';
import { datasetOf, dicomFixture, listFiles, transferFiles, startHarness, type DicomHarness } from './support/dicom-harness.ts';
import { associate, cStoreRequest, pData, RawPeer, statusOf } from './support/raw-peer.ts';

const ctClass = '1.2.840.10008.5.1.4.1.1.2';
const ctInstance = '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322';

let harness: DicomHarness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.stop());

test('close() stops accepting, lets the store in flight finish, and aborts idle associations', async () => {
  const site = await createTestSite(harness.db.database);
  const dataset = datasetOf(await readFile(dicomFixture('CT_small.dcm')));
  const context = { id: 1, abstractSyntax: ctClass, transferSyntaxes: ['1.2.840.10008.1.2.1'] };
  const busy = await associate(harness.listener.port, site.aeTitle, [context]);
  const idle = await associate(harness.listener.port, site.aeTitle, [context]);
  busy.write(pData(1, true, true, cStoreRequest(1, ctClass, ctInstance)));
  busy.write(pData(1, false, false, dataset.subarray(0, 10_000)));
  // The transfer is under way once its temporary file exists.
  for (let attempt = 0; (await transferFiles(harness.dataDir)).length === 0; attempt++) {
    assert.ok(attempt < 600, 'the transfer never started');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const port = harness.listener.port;
  const closing = harness.listener.close();
  // The idle association is aborted at once.
  assert.equal((await idle.nextPdu())?.type, 0x07);
  // New connections are refused.
  await assert.rejects(RawPeer.connect(port));
  // The transfer in progress completes and is acknowledged, then its association is aborted.
  busy.write(pData(1, false, true, dataset.subarray(10_000)));
  const response = await busy.nextPdu();
  assert.equal(response?.type, 0x04);
  assert.equal(statusOf(response!.body), 0x0000);
  assert.equal((await busy.nextPdu())?.type, 0x07);
  await closing;
  const { rows } = await harness.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, 1);
  // The site's spare temporary files (created when its transfer began) are removed with the listener.
  assert.deepEqual(await listFiles(join(harness.dataDir, 'dicom', 'tmp')), []);
  await harness.restart();
});
