import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { StorageLayout } from '../../src/storage/dicom/layout.ts';
import { recoverEveryTemporaryFolder, workerTemporaryFolder } from '../../src/dicom/transfer-recovery.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { placedTransfer } from './support/placed-transfer.ts';

// With several workers each writes its transfers in its own folder under dicom/tmp, and recovers
// only that folder when it (re)starts; before any worker starts, the supervisor recovers them all,
// including the folders of workers the previous run had and this one does not.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test("a worker's layout recovers its own folder only; the supervisor's pass recovers every folder", async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const single = new StorageLayout(services.config.dataDir);
  const second = new StorageLayout(services.config.dataDir, workerTemporaryFolder(2));
  const seventh = new StorageLayout(services.config.dataDir, workerTemporaryFolder(7));
  await Promise.all([single, second, seventh].map((layout) => layout.prepare(async () => true)));
  const leftovers = [
    await placedTransfer(single, site.siteId, { study: '1.2.3', series: '1.2.3.1', instance: '1.2.3.1.1' }),
    await placedTransfer(second, site.siteId, { study: '1.2.3', series: '1.2.3.1', instance: '1.2.3.1.2' }),
    await placedTransfer(seventh, site.siteId, { study: '1.2.3', series: '1.2.3.1', instance: '1.2.3.1.3' }),
  ];

  // Worker 2 restarting: its own unindexed file goes, the others' stay.
  const restarted = new StorageLayout(services.config.dataDir, workerTemporaryFolder(2));
  assert.equal(await restarted.prepare(async () => false), 1);
  await restarted.close();
  assert.deepEqual(leftovers.map((leftover) => existsSync(single.absolute(leftover.path))), [true, false, true]);
  assert.deepEqual(readdirSync(second.tmpDir), []);

  // The supervisor, before any worker: every folder (none of these was indexed).
  assert.equal(await recoverEveryTemporaryFolder(services), 2);
  assert.deepEqual(leftovers.map((leftover) => existsSync(single.absolute(leftover.path))), [false, false, false]);
  assert.deepEqual([single.tmpDir, seventh.tmpDir].map((folder) => readdirSync(folder).filter((name) => name.endsWith('.part'))), [[], []]);
  await Promise.all([single, second, seventh].map((layout) => layout.close()));
});
