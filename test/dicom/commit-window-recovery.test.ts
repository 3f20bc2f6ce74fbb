import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startDicomListener } from '../../src/dicom/listener.ts';
import { StorageLayout } from '../../src/dicom/storage/layout.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';

// A crash after a file was moved into place but before its index transaction committed leaves a
// file that nothing points at, and the marker written before the move. Start-up removes the file
// unless the index does point at it (the crash came after the commit).
let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('start-up removes a moved file whose index commit never happened, and keeps an indexed one', async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const layout = new StorageLayout(services.config.dataDir);
  await layout.prepare(async () => true);
  const orphan = layout.instancePath(site.siteId, '1.2.3', '1.2.3.4', '1.2.3.4.5');
  const kept = layout.instancePath(site.siteId, '1.2.3', '1.2.3.4', '1.2.3.4.6');
  for (const path of [orphan, kept]) {
    await mkdir(dirname(layout.absolute(path)), { recursive: true });
    await writeFile(layout.absolute(path), 'dataset');
    await layout.markMoving(path);
  }
  // The second instance committed before the crash: the index points at its file.
  const indexed = new Set([kept]);
  const removed = await layout.prepare(async (path) => indexed.has(path));
  assert.equal(removed, 1);
  assert.equal(existsSync(layout.absolute(orphan)), false, 'the unindexed file is removed');
  assert.equal(existsSync(layout.absolute(kept)), true, 'the indexed file stays');
  assert.equal(readdirSync(layout.tmpDir).filter((name) => name.endsWith('.moving')).length, 0, 'markers are cleared');
});

test('the listener runs that recovery against the index at start: unindexed files go, indexed ones stay', async () => {
  const site = await createTestSite(db.database);
  const services = testServices(db.database);
  const layout = new StorageLayout(services.config.dataDir);
  // A stored instance whose marker outlived its commit (a crash right after COMMIT).
  const first = await startDicomListener(services, { host: '127.0.0.1', port: 0 });
  const fixture = new URL('../../../shared/fixtures/dicom/MR_small_implicit.dcm', import.meta.url).pathname;
  await promisify(execFile)('storescu', ['-aec', site.aeTitle, '127.0.0.1', String(first.port), fixture], { env: { ...process.env, TCP_NODELAY: '1' } });
  await first.close();
  const { rows } = await db.database.query<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  const stored = rows[0]!.storage_path;
  await layout.markMoving(stored);
  const orphan = layout.instancePath(site.siteId, '1.2.9', '1.2.9.1', '1.2.9.1.1');
  await mkdir(dirname(layout.absolute(orphan)), { recursive: true });
  await writeFile(layout.absolute(orphan), 'dataset');
  await layout.markMoving(orphan);
  const listener = await startDicomListener(services, { host: '127.0.0.1', port: 0 });
  await listener.close();
  assert.equal(existsSync(layout.absolute(orphan)), false, 'the unindexed file is removed');
  assert.equal(existsSync(layout.absolute(stored)), true, 'the indexed file stays');
});
