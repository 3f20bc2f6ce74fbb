import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { link } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { processTemporaryFolder, startDicomListener } from '../../src/dicom/listener.ts';
import { StorageLayout } from '../../src/dicom/storage/layout.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { fixturePath } from '../support/fixtures.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { placedTransfer } from './support/placed-transfer.ts';

// A crash after a file was linked into place but before its index transaction committed leaves a
// file with two names: its temporary one and its final one. Start-up removes the final name unless
// the index does point at it (the crash came after the commit), and the temporary one always.
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('start-up removes a linked file whose index commit never happened, and keeps an indexed one', async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const layout = new StorageLayout(services.config.dicomStorageDir, processTemporaryFolder(services.config));
  await layout.prepare(async () => true);
  const orphan = await placedTransfer(layout, site.siteId, { study: '1.2.3', series: '1.2.3.4', instance: '1.2.3.4.5' });
  const kept = await placedTransfer(layout, site.siteId, { study: '1.2.3', series: '1.2.3.4', instance: '1.2.3.4.6' });
  // The second instance committed before the crash: the index points at its file.
  const indexed = new Set([kept.path]);
  const removed = await layout.prepare(async (path) => indexed.has(path));
  assert.equal(removed, 1);
  assert.equal(existsSync(layout.absolute(orphan.path)), false, 'the unindexed file is removed');
  assert.equal(existsSync(layout.absolute(kept.path)), true, 'the indexed file stays');
  assert.deepEqual(readdirSync(layout.tmpDir), [], 'temporary names are cleared');
});

test('the listener runs that recovery against the index at start: unindexed files go, indexed ones stay', async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const layout = new StorageLayout(services.config.dicomStorageDir, processTemporaryFolder(services.config));
  const first = await startDicomListener(services, { host: '127.0.0.1', port: 0 });
  try {
    await promisify(execFile)('storescu', ['-aec', site.aeTitle, '127.0.0.1', String(first.port), fixturePath('dicom/MR_small_implicit.dcm')], { env: { ...process.env, TCP_NODELAY: '1' }, timeout: 60_000 });
  } finally {
    await first.close();
  }
  const { rows } = await db.database.query<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  const stored = rows[0]!.storage_path;
  // A stored instance whose temporary name outlived its commit (a crash right after COMMIT).
  await link(layout.absolute(stored), layout.temporaryPath(site.siteId));
  const orphan = await placedTransfer(layout, site.siteId, { study: '1.2.9', series: '1.2.9.1', instance: '1.2.9.1.1' });
  const listener = await startDicomListener(services, { host: '127.0.0.1', port: 0 });
  await listener.close();
  assert.equal(existsSync(layout.absolute(orphan.path)), false, 'the unindexed file is removed');
  assert.equal(existsSync(layout.absolute(stored)), true, 'the indexed file stays');
  assert.deepEqual(readdirSync(layout.tmpDir), [], 'temporary names are cleared');
});
