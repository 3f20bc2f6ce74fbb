import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { BatchQueue, type Settled } from '../../src/storage/batch-queue.ts';

/** A runner whose batches finish only when the test says so. */
function heldRunner() {
  const batches: { items: readonly number[]; startedAt: number; finish(outcomes?: Settled<string>[]): void; fail(error: unknown): void }[] = [];
  const run = (items: readonly number[]) =>
    new Promise<Settled<string>[]>((resolve, reject) => {
      batches.push({
        items,
        startedAt: performance.now(),
        finish: (outcomes) => resolve(outcomes ?? items.map((item) => ({ ok: true, value: `done ${item}` }))),
        fail: reject,
      });
    });
  return { batches, run, items: () => batches.map((batch) => batch.items) };
}

const settleAll = <T>(promises: Promise<T>[]) => Promise.allSettled(promises);
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Finishes every batch, including those that start meanwhile, until the answers are in. */
async function finishAll(runner: ReturnType<typeof heldRunner>): Promise<void> {
  for (let i = 0; i < runner.batches.length; i++) {
    runner.batches[i]!.finish();
    await turn();
    await turn();
  }
}

test('a lone call runs alone at the end of the turn it was made in', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 2, maxBatch: 10, run: runner.run });
  const answer = queue.add(1);
  assert.equal(runner.batches.length, 0);
  await turn();
  assert.deepEqual(runner.items(), [[1]]);
  runner.batches[0]!.finish();
  assert.equal(await answer, 'done 1');
  await turn();
  assert.equal(queue.inFlight, 0);
});

test('the calls of one turn leave together, at most maxBatch at a time', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 3, run: runner.run });
  const answers = Promise.all([1, 2, 3, 4, 5].map((item) => queue.add(item)));
  await turn();
  assert.deepEqual(runner.items(), [[1, 2, 3]]);
  await finishAll(runner);
  assert.deepEqual(runner.items(), [[1, 2, 3], [4, 5]]);
  assert.deepEqual(await answers, [1, 2, 3, 4, 5].map((item) => `done ${item}`));
});

test('calls made while a batch runs wait for it and then leave together', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 2, spreadAfterMs: 60_000, maxBatch: 10, run: runner.run });
  const first = queue.add(1);
  await turn();
  const later = [queue.add(2)];
  await turn();
  later.push(queue.add(3));
  await turn();
  assert.deepEqual(runner.items(), [[1]], 'the second batch waits while the first has run only briefly');
  runner.batches[0]!.finish();
  await first;
  await turn();
  assert.deepEqual(runner.items(), [[1], [2, 3]]);
  runner.batches[1]!.finish();
  assert.deepEqual(await Promise.all(later), ['done 2', 'done 3']);
});

test('a batch that runs longer than spreadAfterMs lets the next start beside it, within maxInFlight', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 2, spreadAfterMs: 30, maxBatch: 10, run: runner.run });
  const answers = [queue.add(1)];
  await turn();
  answers.push(queue.add(2));
  for (let waited = 0; runner.batches.length < 2 && waited < 5_000; waited += 5) await delay(5);
  assert.deepEqual(runner.items(), [[1], [2]]);
  assert.ok(runner.batches[1]!.startedAt - runner.batches[0]!.startedAt >= 29, 'not before the first had run for spreadAfterMs');
  answers.push(queue.add(3));
  await delay(80);
  assert.equal(runner.batches.length, 2, 'no third batch while two run');
  runner.batches[1]!.finish();
  await answers[1];
  await turn();
  assert.deepEqual(runner.items(), [[1], [2], [3]]);
  runner.batches[0]!.finish();
  runner.batches[2]!.finish();
  assert.deepEqual(await Promise.all(answers), ['done 1', 'done 2', 'done 3']);
});

test('each item gets its own outcome; a runner that throws fails its whole batch and no other', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 10, run: runner.run });
  const first = settleAll([queue.add(1)]);
  await turn();
  const answers = settleAll([2, 3, 4].map((item) => queue.add(item)));
  runner.batches[0]!.fail(new Error('server gone'));
  await turn();
  await turn();
  runner.batches[1]!.finish([{ ok: true, value: 'two' }, { ok: false, error: new Error('three refused') }, { ok: true, value: 'four' }]);
  const [firstOutcome] = await first;
  assert.equal(firstOutcome!.status, 'rejected');
  assert.match(String((firstOutcome as PromiseRejectedResult).reason), /server gone/);
  assert.deepEqual(
    (await answers).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)),
    ['two', 'three refused', 'four'],
  );
  // The queue goes on after a failed batch.
  const later = queue.add(5);
  await turn();
  runner.batches[2]!.finish();
  assert.equal(await later, 'done 5');
});

test('a runner answering the wrong number of items fails the batch rather than leaving a caller waiting', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 10, run: runner.run });
  const answers = settleAll([queue.add(1), queue.add(2)]);
  await turn();
  runner.batches[0]!.finish([{ ok: true, value: 'only one' }]);
  for (const outcome of await answers) {
    assert.equal(outcome.status, 'rejected');
    assert.match(String(outcome.reason), /batch of 2 was answered with 1/);
  }
});

test('a batch stops short of the weight bound, but always takes one item however heavy', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 10, maxWeight: 100, weigh: (item: number) => item, run: runner.run });
  const answers = Promise.all([60, 30, 20, 500, 40, 70].map((item) => queue.add(item)));
  await turn();
  await finishAll(runner);
  assert.deepEqual(runner.items(), [[60, 30], [20], [500], [40], [70]]);
  await answers;
});

test('bounds below one are refused', () => {
  const run = async () => [];
  assert.throws(() => new BatchQueue({ maxInFlight: 0, maxBatch: 1, run }), RangeError);
  assert.throws(() => new BatchQueue({ maxInFlight: 1, maxBatch: 0, run }), RangeError);
});
