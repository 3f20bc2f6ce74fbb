import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { StorageLayout } from '../../src/dicom/storage/layout.ts';
import { workerTemporaryFolder } from '../../src/dicom/storage/temporary-folders.ts';
import { recoverNodeTemporaryFolders } from '../../src/dicom/transfer-recovery.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { placedTransfer } from './support/placed-transfer.ts';

// Each process of each node writes its transfers in its own folder of the shared storage
// (tmp/<node>/worker-<n>) and recovers only that folder when it (re)starts; before any worker
// starts, a node recovers every folder of its own, including those of workers the previous run had
// and this one does not, and those of versions before nodes under its data directory. Never
// another node's: its transfers may be in flight.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test("a worker recovers its own folder only; a node recovers every folder of its own and none of another node's", async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const storage = services.config.dicomStorageDir;
  const layoutOf = (node: string, worker: number) => new StorageLayout(storage, workerTemporaryFolder(storage, node, worker));
  const first = layoutOf('node-a', 1);
  const second = layoutOf('node-a', 2);
  const seventh = layoutOf('node-a', 7);
  const otherNode = layoutOf('node-b', 1);
  const layouts = [first, second, seventh, otherNode];
  await Promise.all(layouts.map((layout) => layout.prepare(async () => true)));
  const transfer = (layout: StorageLayout, instance: string) => placedTransfer(layout, site.siteId, { study: '1.2.3', series: '1.2.3.1', instance });
  const leftovers = [await transfer(first, '1.2.3.1.1'), await transfer(second, '1.2.3.1.2'), await transfer(seventh, '1.2.3.1.3'), await transfer(otherNode, '1.2.3.1.4')];
  const present = () => leftovers.map((leftover) => existsSync(first.absolute(leftover.path)));

  // Worker 2 of node A restarting: its own unindexed file goes, the others' stay.
  const restarted = layoutOf('node-a', 2);
  assert.equal(await restarted.prepare(async () => false), 1);
  await restarted.close();
  assert.deepEqual(present(), [true, false, true, true]);
  assert.deepEqual(readdirSync(second.tmpDir), []);

  // Node A starting, before any worker: every folder of node A (none of these was indexed), none of node B's.
  assert.equal(await recoverNodeTemporaryFolders(services, 'node-a'), 2);
  assert.deepEqual(present(), [false, false, false, true]);
  assert.deepEqual([first.tmpDir, seventh.tmpDir].map((folder) => readdirSync(folder).filter((name) => name.endsWith('.part'))), [[], []]);
  assert.equal(existsSync(leftovers[3]!.temp), true, "node B's transfer is untouched");
  await Promise.all(layouts.map((layout) => layout.close()));
});

test('a node recovers the temporary folders that versions before nodes left under its data directory', async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const legacyRoot = join(services.config.dataDir, 'dicom');
  const single = new StorageLayout(legacyRoot, join(legacyRoot, 'tmp'));
  const worker = new StorageLayout(legacyRoot, join(legacyRoot, 'tmp', 'worker-3'));
  mkdirSync(worker.tmpDir, { recursive: true });
  await Promise.all([single, worker].map((layout) => layout.prepare(async () => true)));
  const leftovers = [
    await placedTransfer(single, site.siteId, { study: '1.2.4', series: '1.2.4.1', instance: '1.2.4.1.1' }),
    await placedTransfer(worker, site.siteId, { study: '1.2.4', series: '1.2.4.1', instance: '1.2.4.1.2' }),
  ];
  assert.equal(await recoverNodeTemporaryFolders(services, 'node-a'), 2);
  assert.deepEqual(leftovers.flatMap((leftover) => [existsSync(leftover.temp), existsSync(single.absolute(leftover.path))]), [false, false, false, false]);
  await Promise.all([single, worker].map((layout) => layout.close()));
});
