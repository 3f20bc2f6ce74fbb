import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { IncomingFile } from '../../src/storage/dicom/incoming-file.ts';
import { SpareFiles, type SpareFile, type SpareFileOptions } from '../../src/storage/dicom/spare-files.ts';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'cg-spare-files-'));
});
after(() => rm(root, { recursive: true, force: true }));

const siteA = '11111111-1111-4111-8111-111111111111';
const siteB = '22222222-2222-4222-8222-222222222222';

/** A pool over a folder of its own; `durableCalls` lists the files present at each names-durable call. */
async function pool(overrides: Partial<SpareFileOptions> = {}) {
  const folder = join(root, randomUUID());
  await mkdir(folder);
  const durableCalls: string[][] = [];
  const spares = new SpareFiles({
    nameFor: (siteId) => join(folder, `${randomUUID()}~${siteId}.part`),
    namesDurable: async () => {
      durableCalls.push(readdirSync(folder));
    },
    perSite: 8,
    total: 12,
    idleMs: 60_000,
    ...overrides,
  });
  return { folder, spares, durableCalls, files: () => readdirSync(folder) };
}

async function eventually(check: () => boolean): Promise<void> {
  for (let attempt = 0; !check(); attempt++) {
    assert.ok(attempt < 200, 'condition never met');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function openDescriptorOf(path: string): boolean {
  return readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });
}

test('a site gets spares on its first take, each created, open and named durably before it is handed out', async () => {
  const { spares, durableCalls, files } = await pool();
  assert.equal(spares.take(siteA), undefined, 'none is ready for a site that never stored');
  await eventually(() => spares.count === 2 && files().length === 2);
  let found: SpareFile | undefined;
  await eventually(() => (found = spares.take(siteA)) !== undefined);
  const spare = found!;
  assert.ok(spare.path.endsWith(`~${siteA}.part`));
  assert.ok(durableCalls.some((present) => present.includes(spare.path.split('/').pop()!)), 'its name was made durable after it was created');
  assert.ok(openDescriptorOf(spare.path), 'it comes open');
  await spares.close();
});

test('a site whose transfers outrun its spares gets more, up to the per-site and total bounds', async () => {
  const { spares, files } = await pool();
  const taken = [];
  for (let round = 0; round < 12; round++) {
    const spare = spares.take(siteA);
    if (spare) taken.push(spare);
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.ok(spares.count + taken.length > 2, 'more than the first two');
  assert.ok(spares.count <= 8, `at most perSite kept (${spares.count})`);
  spares.take(siteB);
  assert.ok(spares.count <= 12, `at most total kept (${spares.count})`);
  // Once the creations in flight are done, every file is a kept spare or a taken one.
  await eventually(() => files().length === spares.count + taken.length);
  await spares.close();
});

test('spares of a site that stops storing are removed after the idle time; close removes the rest', async () => {
  const { spares, files } = await pool({ idleMs: 100 });
  spares.take(siteA);
  await eventually(() => files().length === 2);
  await eventually(() => files().length === 0);
  assert.equal(spares.count, 0);

  spares.take(siteB);
  await spares.close();
  assert.deepEqual(files(), [], 'close waits for spares still being created');
  assert.equal(spares.take(siteB), undefined, 'a closed pool hands out nothing');
});

test('a batch of spares is named by one folder fsync, begun once every file of the batch exists', async () => {
  const { spares, durableCalls } = await pool({ perSite: 8 });
  spares.take(siteA); // the site's first batch: two spares
  await eventually(() => spares.count === 2 && durableCalls.length > 0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(durableCalls.length, 1, 'one fsync for the batch, not one per file');
  assert.equal(durableCalls[0]!.length, 2, 'both files existed when it began');
  await spares.close();
});

test('a spare whose name cannot be made durable is removed, and a missing folder gives none', async () => {
  const failing = await pool({
    namesDurable: async () => {
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    },
  });
  failing.spares.take(siteA);
  await eventually(() => failing.spares.count === 0 && failing.files().length === 0);
  await failing.spares.close();

  const gone = await pool();
  await rm(gone.folder, { recursive: true });
  assert.equal(gone.spares.take(siteA), undefined);
  await eventually(() => gone.spares.count === 0); // nothing is kept, and nothing throws
  await gone.spares.close();
});

/** A pool's spare, taken once ready, and a transfer adopting it. */
async function transferIntoSpare() {
  const { spares } = await pool();
  spares.take(siteA);
  let found: SpareFile | undefined;
  await eventually(() => (found = spares.take(siteA)) !== undefined);
  const spare = found!;
  const file = IncomingFile.adopt(spare, { sopClassUid: '1.2.840.10008.5.1.4.1.1.7', sopInstanceUid: '1.2.3.4', transferSyntaxUid: '1.2.840.10008.1.2.1', sourceAeTitle: 'MODALITY' });
  return { spares, spare, file };
}

test('a transfer with an empty data set still writes its Part-10 header, durably', async () => {
  const { spares, file } = await transferIntoSpare();
  const completed = await file.complete();
  await completed.durable;
  const written = readFileSync(completed.tempPath);
  assert.equal(written.toString('latin1', 128, 132), 'DICM');
  assert.equal(completed.sizeBytes, written.length);
  await spares.close();
});

test('a transfer written into a spare holds exactly the Part-10 header and the dataset, durably', async () => {
  const { spares, spare, file } = await transferIntoSpare();
  // (0008,0016) UI and (0008,0018) UI, explicit VR little endian.
  const dataset = Buffer.concat([
    Buffer.from([0x08, 0x00, 0x16, 0x00, 0x55, 0x49, 0x1a, 0x00]),
    Buffer.from('1.2.840.10008.5.1.4.1.1.7\0'),
    Buffer.from([0x08, 0x00, 0x18, 0x00, 0x55, 0x49, 0x08, 0x00]),
    Buffer.from('1.2.3.4\0'),
  ]);
  await file.write(dataset.subarray(0, 10));
  await file.write(dataset.subarray(10));
  const completed = await file.complete();
  await completed.named;
  await completed.durable;
  const written = readFileSync(completed.tempPath);
  assert.equal(completed.tempPath, spare.path);
  assert.equal(written.toString('latin1', 128, 132), 'DICM');
  assert.deepEqual(written.subarray(written.length - dataset.length), dataset);
  assert.equal(completed.sizeBytes, written.length);
  assert.equal(completed.sniff.fields.sopInstanceUid, '1.2.3.4');
  assert.ok(!openDescriptorOf(spare.path), 'the descriptor is closed once durable');
  assert.ok(existsSync(spare.path));
  await spares.close();
});
