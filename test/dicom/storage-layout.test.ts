import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { StorageLayout } from '../../src/dicom/storage/layout.ts';

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'cg-layout-test-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

const markers = (layout: StorageLayout) => readdirSync(layout.tmpDir).filter((name) => name.endsWith('.moving'));

test('a marker linked to the file being moved names its target: recovery removes the file unless it is indexed', async () => {
  const layout = new StorageLayout(dataDir);
  await layout.prepare(async () => true);
  const siteId = randomUUID();
  const orphan = layout.instancePath(siteId, '1.2.3', '1.2.3.4', '1.2.3.4.5');
  const kept = layout.instancePath(siteId, '1.2.3', '1.2.3.4', '1.2.3.4.6');
  for (const path of [orphan, kept]) {
    const temp = join(layout.tmpDir, `${randomUUID()}.part`);
    await writeFile(temp, `dataset of ${path}`);
    const marker = await layout.markMoving(path, temp);
    assert.ok(marker.endsWith('.moving'));
    await layout.prepareFolder(path);
    const moved = await layout.moveIntoPlace(temp, path);
    await moved.durable;
    assert.equal(await readFile(layout.absolute(path), 'utf8'), `dataset of ${path}`);
  }
  assert.equal(markers(layout).length, 2);
  // A crash here: neither marker was cleared; only the second instance's commit happened.
  const indexed = new Set([kept]);
  const restarted = new StorageLayout(dataDir);
  assert.equal(await restarted.prepare(async (path) => indexed.has(path)), 1);
  assert.equal(existsSync(layout.absolute(orphan)), false, 'the unindexed file is removed');
  assert.equal(await readFile(layout.absolute(kept), 'utf8'), `dataset of ${kept}`, 'the indexed file stays whole');
  assert.deepEqual(markers(layout), []);
});

test('a marker holding its target as content, as earlier versions wrote them, is still honoured', async () => {
  const layout = new StorageLayout(dataDir);
  await layout.prepare(async () => true);
  const orphan = layout.instancePath(randomUUID(), '1.2.5', '1.2.5.1', '1.2.5.1.1');
  await layout.prepareFolder(orphan);
  await writeFile(layout.absolute(orphan), 'dataset');
  await writeFile(join(layout.tmpDir, 'a1b2c3d4e5f6a1b2c3d4e5f6.moving'), orphan);
  assert.equal(await layout.prepare(async () => false), 1);
  assert.equal(existsSync(layout.absolute(orphan)), false);
  assert.deepEqual(markers(layout), []);
});

test('a move into a folder removed behind the listener recreates the folder', async () => {
  const layout = new StorageLayout(dataDir);
  await layout.prepare(async () => true);
  const first = layout.instancePath(randomUUID(), '1.2.7', '1.2.7.1', '1.2.7.1.1');
  const second = first.replace(/1\.2\.7\.1\.1\.dcm$/, '1.2.7.1.2.dcm');
  const place = async (path: string) => {
    const temp = join(layout.tmpDir, `${randomUUID()}.part`);
    await writeFile(temp, path);
    await (await layout.moveIntoPlace(temp, path)).durable;
  };
  await place(first);
  await rm(dirname(dirname(layout.absolute(first))), { recursive: true });
  await place(second);
  assert.equal(await readFile(layout.absolute(second), 'utf8'), second);
});
