import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { link, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { processTemporaryFolder } from '../../src/dicom/listener.ts';
import { StorageLayout } from '../../src/dicom/storage/layout.ts';
import { canonicalStoragePath, resolveStoredInstance, storedInstancePath } from '../../src/domain/imaging/stored-instance-file.ts';
import { createTestSite } from '../support/sites.ts';
import { dicomFixture, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';

// imaging_instance.storage_path is relative to the DICOM storage folder; rows written before the
// folder could be set hold dicom/<site>/..., relative to the data directory, and keep working.
let harness: DicomHarness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.stop());

test('a stored path resolves under the storage folder, in its current and its earlier form; nothing else resolves', () => {
  const site = randomUUID();
  const path = storedInstancePath(site, '1.2.3', '1.2.3.4', '1.2.3.4.5');
  assert.equal(path, `${site}/1.2.3/1.2.3.4/1.2.3.4.5.dcm`);
  assert.equal(resolveStoredInstance('/srv/dicom', path), `/srv/dicom/${site}/1.2.3/1.2.3.4/1.2.3.4.5.dcm`);
  assert.equal(resolveStoredInstance('/srv/dicom', `dicom/${path}`), `/srv/dicom/${site}/1.2.3/1.2.3.4/1.2.3.4.5.dcm`);
  assert.equal(canonicalStoragePath(`dicom/${path}`), path);
  for (const hostile of ['/etc/passwd', `dicom/../${path}`, `${site}/../../x/1.dcm`, `${site}/1.2/1.2/1.dcm/../../..`, 'tmp/node/worker-1/x.part', '', `dicom/dicom/${path}`]) {
    assert.throws(() => resolveStoredInstance('/srv/dicom', hostile), /not a stored instance path/, hostile);
  }
  assert.throws(() => storedInstancePath(site, '1.2.3', '../1', '1.2'), /not a UID/);
  assert.throws(() => storedInstancePath('../x', '1.2.3', '1.2', '1.2'), /not a site id/);
});

test('an instance indexed under the earlier path form is found, re-sent as a duplicate and kept by start-up recovery', async () => {
  const site = await createTestSite(harness.db.database);
  const stored = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('CT_small.dcm')]);
  assert.equal(stored.code, 0, stored.stderr);
  // What a row of an earlier version looks like (its file was under CG_DATA_DIR/dicom, the default storage folder).
  const { rows } = await harness.db.database.query<{ storage_path: string }>(
    `UPDATE imaging_instance SET storage_path = 'dicom/' || storage_path WHERE site_id = $1 RETURNING storage_path`,
    [site.siteId],
  );
  const legacy = rows[0]!.storage_path;
  assert.match(legacy, /^dicom\/[0-9a-f-]{36}\//);
  const file = resolveStoredInstance(harness.services.config.dicomStorageDir, legacy);
  assert.equal(file, join(harness.dataDir, legacy));
  const bytes = await readFile(file);

  // Re-sent: a duplicate of the stored instance, whose file stays as it was.
  const again = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('CT_small.dcm')]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(await readFile(file), bytes);

  // A crash right after its commit left its temporary name: recovery keeps the indexed file.
  const layout = new StorageLayout(harness.services.config.dicomStorageDir, processTemporaryFolder(harness.services.config));
  await link(file, layout.temporaryPath(site.siteId));
  await harness.restart();
  assert.equal(existsSync(file), true, 'the file indexed under the earlier form stays');
  assert.deepEqual(readdirSync(layout.tmpDir), [], 'its temporary name is removed');
  const count = await harness.db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  assert.equal(count.rows[0]!.n, 1);
});
