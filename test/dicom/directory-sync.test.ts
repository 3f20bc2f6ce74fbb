import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DirectorySync } from '../../src/storage/dicom/directory-sync.ts';

/** An fsync that completes when the test says so, recording each round it was asked for. */
function controlledFsync() {
  const rounds: { folder: string; finish: (error?: Error) => void }[] = [];
  const fsync = (folder: string) =>
    new Promise<void>((resolve, reject) => {
      rounds.push({ folder, finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { rounds, fsync };
}

/** Whether a promise has settled, without waiting for it. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test('a request made while an fsync runs is answered by the next one, which every such request shares', async () => {
  const { rounds, fsync } = controlledFsync();
  const sync = new DirectorySync(fsync);
  const first = sync.sync('/a');
  const second = sync.sync('/a');
  const third = sync.sync('/a');
  assert.equal(rounds.length, 1, 'one fsync runs at a time per folder');
  rounds[0]!.finish();
  await first;
  assert.equal(await settled(second), false, 'the fsync that began before the request does not answer it');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(rounds.length, 2, 'the waiting requests share one more fsync');
  rounds[1]!.finish();
  await Promise.all([second, third]);
  assert.equal(rounds.length, 2);
});

test('folders are synced independently, and an idle folder starts a new fsync at once', async () => {
  const { rounds, fsync } = controlledFsync();
  const sync = new DirectorySync(fsync);
  const a = sync.sync('/a');
  const b = sync.sync('/b');
  assert.deepEqual(
    rounds.map((round) => round.folder),
    ['/a', '/b'],
  );
  for (const round of rounds) round.finish();
  await Promise.all([a, b]);
  const again = sync.sync('/a');
  assert.equal(rounds.length, 3);
  rounds[2]!.finish();
  await again;
});

test('a failed fsync fails the requests it answers, and only those', async () => {
  const { rounds, fsync } = controlledFsync();
  const sync = new DirectorySync(fsync);
  const first = sync.sync('/a');
  const waiting = sync.sync('/a');
  rounds[0]!.finish(new Error('EIO'));
  await assert.rejects(first, /EIO/);
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(rounds.length, 2, 'the waiting request still gets its own fsync');
  rounds[1]!.finish();
  await waiting;
});
