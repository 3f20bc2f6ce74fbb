import assert from 'node:assert/strict';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { OpenDirectories } from '../../src/storage/dicom/open-directories.ts';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'cg-open-directories-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** Descriptors this process holds on folders under `under`. */
function openUnder(under: string): string[] {
  const targets: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(under)) targets.push(target);
    } catch {
      // closed between the listing and the read
    }
  }
  return targets;
}

test('a folder synced again reuses its descriptor; at most 64 stay open; forgetAll closes them', async () => {
  const directories = new OpenDirectories();
  const base = join(root, 'many');
  const folders = Array.from({ length: 70 }, (_, i) => join(base, `f${i}`));
  for (const folder of folders) await mkdir(folder, { recursive: true });
  await directories.fsync(folders[0]!);
  await directories.fsync(folders[0]!);
  assert.deepEqual(openUnder(base), [folders[0]]);
  await Promise.all(folders.map((folder) => directories.fsync(folder)));
  await new Promise((resolve) => setTimeout(resolve, 50)); // closes are asynchronous
  assert.equal(openUnder(base).length, 64);
  await directories.forgetAll();
  assert.deepEqual(openUnder(base), []);
});

test('a folder that is gone fails its fsync, and a failed descriptor is not kept', async () => {
  const directories = new OpenDirectories();
  const folder = join(root, 'gone');
  await assert.rejects(directories.fsync(folder), { code: 'ENOENT' });
  await mkdir(folder);
  await directories.fsync(folder);
  assert.deepEqual(openUnder(folder), [folder]);
});
