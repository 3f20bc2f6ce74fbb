import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { StoredFileCache, workerFileCacheOptions, type CacheLookup } from '../../src/storage/dicom/stored-file-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'cg-file-cache-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function stored(name: string, bytes: Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** Bytes this process has read (proc(5) /proc/self/io rchar). */
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
}

function recording(options = { maxBytes: 1_000_000, maxFileBytes: 300_000, idleMs: 60_000 }) {
  const lookups: CacheLookup[] = [];
  return { cache: new StoredFileCache(options, (outcome) => lookups.push(outcome)), lookups };
}

test('a file read once is answered from memory, byte for byte, without reading it again', async () => {
  const bytes = randomBytes(200_000);
  const path = stored('a.dcm', bytes);
  const { cache, lookups } = recording();
  try {
    assert.ok((await cache.read('row-a', path, bytes.length))?.equals(bytes));
    const before = bytesRead();
    for (let i = 0; i < 5; i++) assert.ok((await cache.read('row-a', path, bytes.length))?.equals(bytes));
    assert.ok(bytesRead() - before < bytes.length, 'the file was read again');
    assert.deepEqual(lookups, ['miss', 'hit', 'hit', 'hit', 'hit', 'hit']);
    assert.equal(cache.bytes, bytes.length);
  } finally {
    cache.clear();
  }
});

test('the key is the index row: the same name stored again under a new row is read afresh', async () => {
  const first = randomBytes(1000);
  const second = randomBytes(1000);
  const path = stored('same-name.dcm', first);
  const { cache } = recording();
  try {
    assert.ok((await cache.read('row-1', path, first.length))?.equals(first));
    writeFileSync(path, second);
    assert.ok((await cache.read('row-2', path, second.length))?.equals(second));
    assert.ok((await cache.read('row-1', path, first.length))?.equals(first), 'row-1 is still what was stored for it');
  } finally {
    cache.clear();
  }
});

test('a file that is not its recorded size is not held, and neither is one over the size limits', async () => {
  const bytes = randomBytes(5000);
  const path = stored('sized.dcm', bytes);
  const large = stored('large.dcm', randomBytes(400_000));
  const { cache, lookups } = recording();
  try {
    assert.equal(await cache.read('shorter-on-disk', path, bytes.length + 1), undefined);
    assert.equal(await cache.read('longer-on-disk', path, bytes.length - 1), undefined);
    assert.equal(await cache.read('too-large', large, 400_000), undefined);
    assert.equal(cache.entries, 0);
    assert.deepEqual(lookups, ['miss', 'miss', 'bypass']);
  } finally {
    cache.clear();
  }
});

test('a full cache admits nothing new until its entries go idle, then holds the new files', async () => {
  const files = Array.from({ length: 4 }, (_, i) => randomBytes(300_000 - i));
  const paths = files.map((bytes, i) => stored(`f${i}.dcm`, bytes));
  const { cache, lookups } = recording({ maxBytes: 700_000, maxFileBytes: 300_000, idleMs: 200 });
  try {
    // The first two fit; the third and fourth are left to the caller to read from disk.
    for (const [i, bytes] of files.entries()) {
      const answer = await cache.read(`row-${i}`, paths[i]!, bytes.length);
      if (i < 2) assert.ok(answer?.equals(bytes));
      else assert.equal(answer, undefined);
    }
    assert.equal(cache.entries, 2);
    assert.deepEqual(lookups, ['miss', 'miss', 'bypass', 'bypass']);
    // Read in turn again: the two held are still answered from memory, nothing was evicted for the others.
    lookups.length = 0;
    for (const [i, bytes] of files.entries()) await cache.read(`row-${i}`, paths[i]!, bytes.length);
    assert.deepEqual(lookups, ['hit', 'hit', 'bypass', 'bypass']);
    // Swept at most a second apart, with nothing read meanwhile.
    await sleep(1_300);
    assert.equal(cache.entries, 0, 'idle entries were not dropped');
    assert.equal(cache.bytes, 0);
    lookups.length = 0;
    await cache.read('row-3', paths[3]!, files[3]!.length);
    assert.deepEqual(lookups, ['miss']);
    assert.equal(cache.entries, 1);
  } finally {
    cache.clear();
  }
});

test('a held file is still answered after the file on disk is gone (the row, not the name, is its identity)', async () => {
  const bytes = randomBytes(3000);
  const path = stored('removed.dcm', bytes);
  const { cache } = recording();
  try {
    await cache.read('row-r', path, bytes.length);
    unlinkSync(path);
    assert.ok((await cache.read('row-r', path, bytes.length))?.equals(bytes));
    await assert.rejects(cache.read('row-other', path, bytes.length), { code: 'ENOENT' });
  } finally {
    cache.clear();
  }
});

test('a size of 0 turns the cache off; a node\'s size is shared out between its workers', async () => {
  const bytes = randomBytes(100);
  const path = stored('off.dcm', bytes);
  const empty = stored('empty.dcm', Buffer.alloc(0));
  const { cache, lookups } = recording(workerFileCacheOptions(0, 1));
  assert.equal(await cache.read('row-off', path, bytes.length), undefined);
  assert.equal(await cache.read('row-empty', empty, 0), undefined);
  assert.deepEqual(lookups, ['bypass', 'bypass']);
  assert.deepEqual(workerFileCacheOptions(128 * 2 ** 20, 2), { maxBytes: 64 * 2 ** 20, maxFileBytes: 4 * 2 ** 20, idleMs: 30_000 });
  assert.deepEqual(workerFileCacheOptions(32 * 2 ** 20, 4), { maxBytes: 8 * 2 ** 20, maxFileBytes: 512 * 1024, idleMs: 30_000 });
});
