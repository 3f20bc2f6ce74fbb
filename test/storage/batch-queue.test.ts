import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BatchQueue, type Settled } from '../../src/storage/batch-queue.ts';

/** A runner whose batches finish only when the test says so. */
function heldRunner() {
  const batches: { items: readonly number[]; finish(outcomes?: Settled<string>[]): void; fail(error: unknown): void }[] = [];
  const run = (items: readonly number[]) =>
    new Promise<Settled<string>[]>((resolve, reject) => {
      batches.push({
        items,
        finish: (outcomes) => resolve(outcomes ?? items.map((item) => ({ ok: true, value: `done ${item}` }))),
        fail: reject,
      });
    });
  return { batches, run };
}

const settleAll = <T>(promises: Promise<T>[]) => Promise.allSettled(promises);
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('a lone call runs at once, alone', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 2, maxBatch: 10, run: runner.run });
  const answer = queue.add(1);
  assert.equal(runner.batches.length, 1);
  assert.deepEqual(runner.batches[0]!.items, [1]);
  runner.batches[0]!.finish();
  assert.equal(await answer, 'done 1');
  await turn();
  assert.equal(queue.inFlight, 0);
});

test('calls made while every batch runs wait and leave together, at most maxBatch at a time', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 2, maxBatch: 3, run: runner.run });
  const answers = [1, 2, 3, 4, 5, 6, 7].map((item) => queue.add(item));
  assert.deepEqual(runner.batches.map((batch) => batch.items), [[1], [2]]);
  runner.batches[0]!.finish();
  await turn();
  assert.deepEqual(runner.batches.map((batch) => batch.items), [[1], [2], [3, 4, 5]]);
  runner.batches[1]!.finish();
  await turn();
  assert.deepEqual(runner.batches.map((batch) => batch.items), [[1], [2], [3, 4, 5], [6, 7]]);
  runner.batches[2]!.finish();
  runner.batches[3]!.finish();
  assert.deepEqual(await Promise.all(answers), [1, 2, 3, 4, 5, 6, 7].map((item) => `done ${item}`));
  await turn();
  assert.equal(queue.inFlight, 0);
});

test('each item gets its own outcome; a runner that throws fails its whole batch and no other', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 10, run: runner.run });
  const first = settleAll([queue.add(1)]);
  const answers = settleAll([2, 3, 4].map((item) => queue.add(item)));
  runner.batches[0]!.fail(new Error('server gone'));
  await turn();
  runner.batches[1]!.finish([{ ok: true, value: 'two' }, { ok: false, error: new Error('three refused') }, { ok: true, value: 'four' }]);
  const [firstOutcome] = await first;
  assert.equal(firstOutcome!.status, 'rejected');
  assert.match(String((firstOutcome as PromiseRejectedResult).reason), /server gone/);
  const outcomes = await answers;
  assert.deepEqual(
    outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)),
    ['two', 'three refused', 'four'],
  );
  // The queue goes on after a failed batch.
  const later = queue.add(5);
  runner.batches[2]!.finish();
  assert.equal(await later, 'done 5');
});

test('a runner answering the wrong number of items fails the batch rather than leaving a caller waiting', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 10, run: runner.run });
  const lone = queue.add(1);
  const answers = settleAll([queue.add(2), queue.add(3)]);
  runner.batches[0]!.finish();
  assert.equal(await lone, 'done 1');
  await turn();
  runner.batches[1]!.finish([{ ok: true, value: 'only one' }]);
  for (const outcome of await answers) {
    assert.equal(outcome.status, 'rejected');
    assert.match(String(outcome.reason), /batch of 2 was answered with 1/);
  }
});

test('a batch stops short of the weight bound, but always takes one item however heavy', async () => {
  const runner = heldRunner();
  const queue = new BatchQueue({ maxInFlight: 1, maxBatch: 10, maxWeight: 100, weigh: (item: number) => item, run: runner.run });
  const answers = Promise.all([1, 60, 30, 20, 500, 40, 70].map((item) => queue.add(item)));
  for (let i = 0; i < runner.batches.length; i++) {
    runner.batches[i]!.finish();
    await turn();
  }
  assert.deepEqual(runner.batches.map((batch) => batch.items), [[1], [60, 30], [20], [500], [40], [70]]);
  await answers;
});

test('bounds below one are refused', () => {
  const run = async () => [];
  assert.throws(() => new BatchQueue({ maxInFlight: 0, maxBatch: 1, run }), RangeError);
  assert.throws(() => new BatchQueue({ maxInFlight: 1, maxBatch: 0, run }), RangeError);
});
