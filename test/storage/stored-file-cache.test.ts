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

function recording(options = { maxBytes: 1_000_000, blockBytes: 500_000, idleMs: 60_000 }) {
  const lookups: CacheLookup[] = [];
  return { cache: new StoredFileCache(options, (outcome) => lookups.push(outcome)), lookups };
}

/** The bytes the cache answers with, copied, its lease released; undefined when it holds no answer. */
async function answer(cache: StoredFileCache, key: string, path: string, size: number): Promise<Buffer | undefined> {
  const cached = await cache.read(key, path, size);
  if (!cached) return undefined;
  const copy = Buffer.from(cached.bytes);
  cached.release();
  return copy;
}

test('a file read once is answered from memory, byte for byte, without reading it again', async () => {
  const bytes = randomBytes(200_000);
  const path = stored('a.dcm', bytes);
  const { cache, lookups } = recording();
  try {
    assert.ok((await answer(cache, 'row-a', path, bytes.length))?.equals(bytes));
    const before = bytesRead();
    for (let i = 0; i < 5; i++) assert.ok((await answer(cache, 'row-a', path, bytes.length))?.equals(bytes));
    assert.ok(bytesRead() - before < bytes.length, 'the file was read again');
    assert.deepEqual(lookups, ['miss', 'hit', 'hit', 'hit', 'hit', 'hit']);
    assert.equal(cache.bytes, bytes.length);
    assert.equal(cache.allocatedBytes, 1_000_000, 'the blocks are allocated when the cache is made');
  } finally {
    cache.clear();
  }
});

test('files of many sizes fill one block after another, each answered as its own file', async () => {
  const files = Array.from({ length: 40 }, (_, i) => randomBytes([0, 1, 4095, 40_000, 89_999][i % 5]! + i));
  const paths = files.map((bytes, i) => stored(`many-${i}.dcm`, bytes));
  const { cache, lookups } = recording({ maxBytes: 4 * 100_001, blockBytes: 100_001, idleMs: 60_000 });
  try {
    for (let round = 0; round < 3; round++) {
      for (const [i, bytes] of files.entries()) {
        const answered = await answer(cache, `row-${i}`, paths[i]!, bytes.length);
        // Files left out when the cache is full are the caller's to read from disk.
        if (answered) assert.ok(answered.equals(bytes), `file ${i} answered with other bytes in round ${round}`);
      }
    }
    assert.equal(cache.allocatedBytes, 4 * 100_001);
    assert.ok(lookups.filter((outcome) => outcome === 'hit').length >= 2 * cache.entries);
    assert.ok(cache.entries >= 20, `only ${cache.entries} files held in four blocks`);
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
    assert.ok((await answer(cache, 'row-1', path, first.length))?.equals(first));
    writeFileSync(path, second);
    assert.ok((await answer(cache, 'row-2', path, second.length))?.equals(second));
    assert.ok((await answer(cache, 'row-1', path, first.length))?.equals(first), 'row-1 is still what was stored for it');
  } finally {
    cache.clear();
  }
});

test('a file that is not its recorded size is not held, and neither is one as large as a block', async () => {
  const bytes = randomBytes(5000);
  const path = stored('sized.dcm', bytes);
  const large = stored('large.dcm', randomBytes(500_000));
  const { cache, lookups } = recording();
  try {
    assert.equal(await cache.read('shorter-on-disk', path, bytes.length + 1), undefined);
    assert.equal(await cache.read('longer-on-disk', path, bytes.length - 1), undefined);
    assert.equal(await cache.read('too-large', large, 500_000), undefined);
    assert.equal(cache.entries, 0);
    assert.deepEqual(lookups, ['miss', 'miss', 'bypass']);
    // The next file read into the block after a wrong-sized one is still its own.
    assert.ok((await answer(cache, 'after', path, bytes.length))?.equals(bytes));
  } finally {
    cache.clear();
  }
});

test('a full cache admits nothing new until a block goes idle, then holds the new files in the same memory', async () => {
  const files = Array.from({ length: 4 }, (_, i) => randomBytes(300_000 - i));
  const paths = files.map((bytes, i) => stored(`f${i}.dcm`, bytes));
  const { cache, lookups } = recording({ maxBytes: 700_000, blockBytes: 350_000, idleMs: 200 });
  try {
    // The first two fit, one in each block; the third and fourth are left to the caller to read from disk.
    for (const [i, bytes] of files.entries()) {
      const answered = await answer(cache, `row-${i}`, paths[i]!, bytes.length);
      if (i < 2) assert.ok(answered?.equals(bytes));
      else assert.equal(answered, undefined);
    }
    assert.equal(cache.entries, 2);
    assert.deepEqual(lookups, ['miss', 'miss', 'bypass', 'bypass']);
    // Read in turn again: the two held are still answered from memory, nothing was evicted for the others.
    lookups.length = 0;
    for (const [i, bytes] of files.entries()) await answer(cache, `row-${i}`, paths[i]!, bytes.length);
    assert.deepEqual(lookups, ['hit', 'hit', 'bypass', 'bypass']);
    // Idle: the next file that needs room empties the blocks and is read into one of them.
    await sleep(250);
    lookups.length = 0;
    assert.ok((await answer(cache, 'row-3', paths[3]!, files[3]!.length))?.equals(files[3]!));
    assert.ok((await answer(cache, 'row-2', paths[2]!, files[2]!.length))?.equals(files[2]!));
    assert.ok((await answer(cache, 'row-3', paths[3]!, files[3]!.length))?.equals(files[3]!));
    assert.deepEqual(lookups, ['miss', 'miss', 'hit']);
    assert.equal(cache.entries, 2);
    assert.equal(cache.bytes, files[2]!.length + files[3]!.length);
    // Read again from disk when asked: the first two were dropped with their blocks.
    assert.equal(await cache.read('row-0', paths[0]!, files[0]!.length), undefined);
    assert.equal(cache.allocatedBytes, 700_000, 'the blocks were not reused but allocated again');
  } finally {
    cache.clear();
  }
});

test('a leased file keeps its block: nothing is read over it until it is released', async () => {
  const first = randomBytes(6000);
  const second = randomBytes(6000);
  const firstPath = stored('leased-1.dcm', first);
  const secondPath = stored('leased-2.dcm', second);
  const { cache, lookups } = recording({ maxBytes: 10_000, blockBytes: 10_000, idleMs: 50 });
  try {
    await answer(cache, 'row-1', firstPath, first.length);
    const held = (await cache.read('row-1', firstPath, first.length))!;
    await sleep(80);
    // Idle, but leased: the one block is neither emptied nor reused, so the second file is not held.
    assert.equal(await cache.read('row-2', secondPath, second.length), undefined);
    assert.ok(held.bytes.equals(first), 'a leased file was overwritten');
    held.release();
    held.release();
    assert.ok((await answer(cache, 'row-2', secondPath, second.length))?.equals(second));
    assert.deepEqual(lookups, ['miss', 'hit', 'bypass', 'miss']);
    assert.equal(cache.entries, 1);
  } finally {
    cache.clear();
  }
});

test('two reads of one file at once both get it; a clear while reading holds nothing', async () => {
  const bytes = randomBytes(50_000);
  const path = stored('concurrent.dcm', bytes);
  const { cache } = recording();
  try {
    const [one, two] = await Promise.all([cache.read('row-c', path, bytes.length), cache.read('row-c', path, bytes.length)]);
    assert.ok(one?.bytes.equals(bytes) && two?.bytes.equals(bytes));
    one!.release();
    two!.release();
    assert.equal(cache.entries, 1);
    const reading = cache.read('row-d', path, bytes.length);
    cache.clear();
    const cleared = await reading;
    assert.ok(cleared?.bytes.equals(bytes), 'a read under way when the cache was cleared still answers its file');
    cleared!.release();
    assert.equal(cache.entries, 0);
    assert.equal(cache.allocatedBytes, 0);
  } finally {
    cache.clear();
  }
});

test('a held file is still answered after the file on disk is gone (the row, not the name, is its identity)', async () => {
  const bytes = randomBytes(3000);
  const path = stored('removed.dcm', bytes);
  const { cache } = recording();
  try {
    await answer(cache, 'row-r', path, bytes.length);
    unlinkSync(path);
    assert.ok((await answer(cache, 'row-r', path, bytes.length))?.equals(bytes));
    await assert.rejects(cache.read('row-other', path, bytes.length), { code: 'ENOENT' });
    // The failed read gave its lease back: the block is still emptied once idle.
    assert.equal(cache.entries, 1);
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
  assert.equal(cache.allocatedBytes, 0);
  assert.deepEqual(workerFileCacheOptions(128 * 2 ** 20, 2), { maxBytes: 64 * 2 ** 20, blockBytes: 4 * 2 ** 20, idleMs: 30_000 });
  assert.deepEqual(workerFileCacheOptions(32 * 2 ** 20, 4), { maxBytes: 8 * 2 ** 20, blockBytes: 512 * 1024, idleMs: 30_000 });
});
