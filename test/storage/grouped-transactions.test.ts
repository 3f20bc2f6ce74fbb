// Grouped transactions: the works of concurrent callers share one commit, each caller learns of
// its work only after that commit, and a group that fails is run again work by work.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { GroupedTransactions } from '../../src/storage/grouped-transactions.ts';
import type { Transaction } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
let holder: pg.Client;
before(async () => {
  db = await createTestDatabase({ migrate: false });
  await db.database.query('CREATE TABLE grouped_probe (id int PRIMARY KEY, label text NOT NULL)');
  holder = new pg.Client({ connectionString: db.connectionString });
  await holder.connect();
});
after(async () => {
  await holder.end();
  await db.drop();
});

const lockKey = 5150;
const insert = (id: number, label: string) => async (tx: Transaction) => {
  await tx.query('INSERT INTO grouped_probe (id, label) VALUES ($1, $2)', [id, label]);
  return id;
};

async function rows(label: string): Promise<{ id: number; xmin: string }[]> {
  const { rows: found } = await db.database.query<{ id: number; xmin: string }>('SELECT id, xmin::text AS xmin FROM grouped_probe WHERE label = $1 ORDER BY id', [label]);
  return found;
}

/** Resolves once some session waits for the advisory lock the test holds (a condition, not a time). */
async function someoneWaitsForTheLock(): Promise<void> {
  for (;;) {
    const { rows: waiting } = await db.database.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1",
      [lockKey],
    );
    if (waiting[0]!.n > 0) return;
    await delay(10);
  }
}

test('works added together share one commit, and none is answered before it', async () => {
  const groups = new GroupedTransactions(db.database, { maxInFlight: 1, spreadAfterMs: 0, maxGroup: 32 });
  await holder.query('SELECT pg_advisory_lock($1)', [lockKey]);
  const settled: number[] = [];
  const first = groups.run(insert(1, 'held')).then((id) => settled.push(id));
  const second = groups
    .run(async (tx) => {
      await tx.query('INSERT INTO grouped_probe (id, label) VALUES (2, $1)', ['held']);
      await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
      return 2;
    })
    .then((id) => settled.push(id));
  await someoneWaitsForTheLock();
  assert.deepEqual(settled, [], 'the first work is not answered while its group has not committed');
  assert.deepEqual(await rows('held'), [], 'nothing of the group is visible before its commit');
  await holder.query('SELECT pg_advisory_unlock($1)', [lockKey]);
  await Promise.all([first, second]);
  const written = await rows('held');
  assert.deepEqual(written.map((row) => row.id), [1, 2]);
  assert.equal(new Set(written.map((row) => row.xmin)).size, 1, 'one transaction wrote both');
  assert.equal(groups.sharedCommits, 1);
});

test('a failing work of a group gets its own error; the others are committed', async () => {
  const groups = new GroupedTransactions(db.database, { maxInFlight: 1, spreadAfterMs: 0, maxGroup: 32 });
  const outcomes = await Promise.allSettled([
    groups.run(insert(10, 'bad')),
    groups.run(async (tx) => {
      await insert(11, 'bad')(tx);
      throw new Error('this work fails');
    }),
    groups.run(insert(12, 'bad')),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.equal((outcomes[1] as PromiseRejectedResult).reason.message, 'this work fails');
  assert.deepEqual((await rows('bad')).map((row) => row.id), [10, 12]);
  assert.equal(groups.sharedCommits, 0, 'the group was not committed; each work ran alone');
});

test('a duplicate key inside a group fails the second copy only', async () => {
  const groups = new GroupedTransactions(db.database, { maxInFlight: 1, spreadAfterMs: 0, maxGroup: 32 });
  const outcomes = await Promise.allSettled([groups.run(insert(20, 'dup')), groups.run(insert(20, 'dup')), groups.run(insert(21, 'dup'))]);
  assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.equal((outcomes[1] as PromiseRejectedResult).reason.code, '23505');
  assert.deepEqual((await rows('dup')).map((row) => row.id), [20, 21]);
});

test('works of one caller, each awaited before the next, commit in that order', async () => {
  const groups = new GroupedTransactions(db.database, { maxInFlight: 2, spreadAfterMs: 0, maxGroup: 32 });
  const others = Array.from({ length: 6 }, (_, i) => groups.run(insert(40 + i, 'others')));
  for (let i = 30; i < 34; i++) await groups.run(insert(i, 'ordered'));
  await Promise.all(others);
  const { rows: ordered } = await db.database.query<{ id: number }>("SELECT id FROM grouped_probe WHERE label = 'ordered' ORDER BY xmin::text::bigint, id");
  assert.deepEqual(ordered.map((row) => row.id), [30, 31, 32, 33]);
});

test('a group runs on the connection a work of it began ahead', async () => {
  const groups = new GroupedTransactions(db.database, { maxInFlight: 1, spreadAfterMs: 0, maxGroup: 32 });
  const backend = async (tx: Transaction) => (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const ahead = db.database.beginAhead();
  try {
    assert.ok(ahead, 'the pool has room for a connection begun ahead');
    const [first, second] = await Promise.all([groups.run(backend), groups.run(backend, ahead)]);
    assert.equal(first, second, 'one transaction ran both works');
    assert.equal(groups.sharedCommits, 1);
    // The connection begun ahead is not left inside BEGIN.
    const { rows: open } = await db.database.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'",
    );
    assert.equal(open[0]!.n, 0);
  } finally {
    ahead?.abandon();
  }
});
