import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageLayout } from '../../src/storage/dicom/layout.ts';
import { placedTransfer } from './support/placed-transfer.ts';
import { writeSyntheticInstance } from './support/synthetic-instance.ts';

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'cg-layout-test-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

const leftovers = (layout: StorageLayout) => readdirSync(layout.tmpDir).filter((name) => name.endsWith('.moving') || name.endsWith('.part'));

test('a transfer linked into place keeps its temporary name until its commit: recovery removes the final name unless it is indexed', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  await layout.prepare(async () => true);
  const siteId = randomUUID();
  const orphan = await placedTransfer(layout, siteId, { study: '1.2.3', series: '1.2.3.4', instance: '1.2.3.4.5' });
  const kept = await placedTransfer(layout, siteId, { study: '1.2.3', series: '1.2.3.4', instance: '1.2.3.4.6' });
  const halfWritten = layout.temporaryPath(siteId);
  await writeFile(halfWritten, 'the first bytes of a transfer');
  assert.equal(leftovers(layout).length, 3);
  // A crash here: no temporary name was released; only the second instance's commit happened.
  const indexed = new Set([kept.path]);
  const restarted = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  assert.equal(await restarted.prepare(async (path) => indexed.has(path)), 2, 'the unindexed instance and the half-written transfer');
  assert.equal(existsSync(layout.absolute(orphan.path)), false, 'the unindexed file is removed');
  assert.equal(existsSync(layout.absolute(kept.path)), true, 'the indexed file stays');
  assert.deepEqual(leftovers(layout), []);
});

test('recovery leaves a linked transfer for the next start when the index cannot answer', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  await layout.prepare(async () => true);
  const transfer = await placedTransfer(layout, randomUUID(), { study: '1.2.4', series: '1.2.4.1', instance: '1.2.4.1.1' });
  await layout.prepare(async () => {
    throw new Error('database unavailable');
  });
  assert.equal(existsSync(transfer.temp), true);
  assert.equal(existsSync(layout.absolute(transfer.path)), true);
  assert.equal(await layout.prepare(async () => false), 1);
  assert.equal(existsSync(layout.absolute(transfer.path)), false);
});

test('a link never replaces a file; taking back removes only the transfer\'s own final name', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  await layout.prepare(async () => true);
  const siteId = randomUUID();
  const first = await placedTransfer(layout, siteId, { study: '1.2.6', series: '1.2.6.1', instance: '1.2.6.1.1' });
  const second = layout.temporaryPath(siteId);
  await writeSyntheticInstance(second, { study: '1.2.6', series: '1.2.6.1', instance: '1.2.6.1.1' }, 2, 4);
  assert.equal(await layout.placeFile(second, first.path), undefined, 'the name is taken');
  await layout.takeBack(second, first.path);
  assert.equal(existsSync(layout.absolute(first.path)), true, 'another transfer\'s file is not taken back');
  await (await layout.replaceUnindexed(second, first.path)).durable;
  assert.equal((await stat(layout.absolute(first.path))).ino, (await stat(second)).ino, 'replaced by the claiming transfer');
  await layout.takeBack(second, first.path);
  assert.equal(existsSync(layout.absolute(first.path)), false);
});

test('a marker named after its target, as earlier versions wrote them, is still honoured', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  await layout.prepare(async () => true);
  const siteId = randomUUID();
  const orphan = layout.instancePath(siteId, '1.2.8', '1.2.8.1', '1.2.8.1.1');
  await layout.prepareFolder(orphan);
  await writeFile(layout.absolute(orphan), 'dataset');
  await writeFile(join(layout.tmpDir, `0a1b2c3d~${siteId}~1.2.8~1.2.8.1~1.2.8.1.1.moving`), '');
  assert.equal(await layout.prepare(async () => false), 1);
  assert.equal(existsSync(layout.absolute(orphan)), false);
  assert.deepEqual(leftovers(layout), []);
});

test('a marker holding its target as content, as earlier versions wrote them, is still honoured', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  await layout.prepare(async () => true);
  const orphan = layout.instancePath(randomUUID(), '1.2.5', '1.2.5.1', '1.2.5.1.1');
  await layout.prepareFolder(orphan);
  await writeFile(layout.absolute(orphan), 'dataset');
  await writeFile(join(layout.tmpDir, 'a1b2c3d4e5f6a1b2c3d4e5f6.moving'), orphan);
  assert.equal(await layout.prepare(async () => false), 1);
  assert.equal(existsSync(layout.absolute(orphan)), false);
  assert.deepEqual(leftovers(layout), []);
});

test('a link into a folder removed behind the listener recreates the folder', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-1'));
  await layout.prepare(async () => true);
  const siteId = randomUUID();
  const first = await placedTransfer(layout, siteId, { study: '1.2.7', series: '1.2.7.1', instance: '1.2.7.1.1' });
  await rm(dirname(dirname(layout.absolute(first.path))), { recursive: true });
  const second = await placedTransfer(layout, siteId, { study: '1.2.7', series: '1.2.7.1', instance: '1.2.7.1.2' });
  assert.equal(existsSync(layout.absolute(second.path)), true);
});

test('a name kept undecided (its commit lost with the connection) goes once the index points at its target, whoever committed it', async () => {
  const layout = new StorageLayout(dataDir, join(dataDir, 'tmp', 'test-node', 'worker-2'));
  const indexed = new Set<string>();
  let databaseUp = false;
  await layout.prepare(async () => true);
  const siteId = randomUUID();
  const transfer = await placedTransfer(layout, siteId, { study: '1.2.9', series: '1.2.9.4', instance: '1.2.9.4.5' });
  await layout.prepare(async (path) => {
    if (!databaseUp) throw new Error('the database is unavailable');
    return indexed.has(path);
  });
  layout.keepUndecided(transfer.path, transfer.temp);
  try {
    await sleep(1_300);
    assert.equal(existsSync(transfer.temp), true, 'kept while the index cannot answer');
    databaseUp = true;
    await sleep(1_300);
    assert.equal(existsSync(transfer.temp), true, 'kept while its target is not indexed');
    // The sender's retry was stored by another worker: its commit cannot settle this one's names.
    indexed.add(transfer.path);
    await sleep(1_300);
    assert.equal(existsSync(transfer.temp), false, 'the temporary name was not released');
    assert.equal(existsSync(layout.absolute(transfer.path)), true, 'the final name stays');
  } finally {
    await layout.close();
  }
});
