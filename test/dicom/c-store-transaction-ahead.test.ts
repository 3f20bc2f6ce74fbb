import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { createTestSite } from '../support/sites.ts';
import { datasetOf, dicomFixture, startHarness, type DicomHarness } from './support/dicom-harness.ts';
import { associate, cStoreRequest, pData, statusOf } from './support/raw-peer.ts';

const ctClass = '1.2.840.10008.5.1.4.1.1.2';
const ctInstance = '1.3.6.1.4.1.5962.1.1.1.1.1.20040119072730.12322';
const ctContext = { id: 1, abstractSyntax: ctClass, transferSyntaxes: ['1.2.840.10008.1.2.1'] };

let harness: DicomHarness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.stop());

/** Sessions of the service's pool inside a transaction that has not run a statement yet. */
async function sessionsBegunAhead(): Promise<number> {
  const { rows } = await harness.db.database.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle in transaction' AND query LIKE 'BEGIN%'`,
  );
  return rows[0]!.n;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; !(await check()); attempt++) {
    assert.ok(attempt < 200, what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a stalled transfer gives back the connection its index transaction began on, and still stores', async () => {
  const site = await createTestSite(harness.db.database);
  const dataset = datasetOf(await readFile(dicomFixture('CT_small.dcm')));
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  peer.write(pData(1, true, true, cStoreRequest(1, ctClass, ctInstance)));
  peer.write(pData(1, false, false, dataset.subarray(0, 10_000)));
  await eventually(async () => (await sessionsBegunAhead()) === 1, 'BEGIN is sent while the dataset arrives');
  // The sender stalls past the 250 ms the connection is held for.
  await eventually(async () => (await sessionsBegunAhead()) === 0, 'the connection is given back while the sender stalls');
  peer.write(pData(1, false, true, dataset.subarray(10_000)));
  const response = await peer.nextPdu();
  assert.equal(statusOf(response!.body), 0x0000);
  const { rows } = await harness.db.database.query('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, 1);
  peer.destroy();
});

test('an association cut during a transfer leaves no connection held', async () => {
  const site = await createTestSite(harness.db.database);
  const dataset = datasetOf(await readFile(dicomFixture('CT_small.dcm')));
  const peer = await associate(harness.listener.port, site.aeTitle, [ctContext]);
  peer.write(pData(1, true, true, cStoreRequest(1, ctClass, ctInstance.replace(/2$/, '3'))));
  peer.write(pData(1, false, false, dataset.subarray(0, 10_000)));
  await eventually(async () => (await sessionsBegunAhead()) === 1, 'BEGIN is sent while the dataset arrives');
  peer.destroy();
  await eventually(async () => (await sessionsBegunAhead()) === 0, 'the connection is given back');
  assert.equal(harness.db.database.pool.waitingCount, 0);
});
