import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { Database, type TransactionAhead } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase({ migrate: false });
  await db.database.query('CREATE TABLE ahead_note (n int NOT NULL)');
});
after(() => db.drop());

/** A pool of its own, so that its connections can be told apart from the test's own queries. */
function smallDatabase(maxConnections: number, applicationName: string): Database {
  return new Database({ connectionString: db.connectionString, maxConnections, applicationName });
}

/** Backend pids of this database's sessions of one application, in a state. */
async function sessions(applicationName: string, state: string): Promise<number[]> {
  const { rows } = await db.database.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND state = $2',
    [applicationName, state],
  );
  return rows.map((row) => row.pid);
}

/** Inserts a note in a transaction given the connection begun ahead; answers the backend it ran on. */
function noteAndTellBackend(database: Database, note: number, ahead: TransactionAhead): Promise<number> {
  return database.transaction(async (tx) => {
    await tx.query('INSERT INTO ahead_note VALUES ($1)', [note]);
    return (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  }, 'read committed', ahead);
}

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; !(await check()); attempt++) {
    assert.ok(attempt < 200, 'condition never met');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('the work runs on the connection begun ahead, and commits', async () => {
  const database = smallDatabase(4, 'ahead-used');
  try {
    const ahead = database.beginAhead();
    assert.ok(ahead);
    let begun: number[] = [];
    await eventually(async () => (begun = await sessions('ahead-used', 'idle in transaction')).length === 1);
    const pid = await noteAndTellBackend(database, 1, ahead);
    assert.equal(pid, begun[0]);
    assert.equal((await db.database.query('SELECT FROM ahead_note WHERE n = 1')).rowCount, 1);
    assert.deepEqual(await sessions('ahead-used', 'idle in transaction'), []);
  } finally {
    await database.close();
  }
});

test('abandoning gives the connection back to the pool, out of its transaction', async () => {
  const database = smallDatabase(4, 'ahead-abandoned');
  try {
    const ahead = database.beginAhead()!;
    await eventually(async () => (await sessions('ahead-abandoned', 'idle in transaction')).length === 1);
    ahead.abandon();
    await eventually(async () => (await sessions('ahead-abandoned', 'idle')).length === 1);
    assert.deepEqual(await sessions('ahead-abandoned', 'idle in transaction'), []);
    assert.equal(database.pool.idleCount, 1);
    assert.equal(await ahead.take(), undefined, 'an abandoned connection cannot be taken');
  } finally {
    await database.close();
  }
});

test('at most half the pool is held ahead, and none while the pool is exhausted', async () => {
  const database = smallDatabase(4, 'ahead-bounded');
  const held: pg.PoolClient[] = [];
  try {
    const first = database.beginAhead();
    const second = database.beginAhead();
    assert.ok(first && second);
    assert.equal(database.beginAhead(), undefined, 'half of four is two');
    first.abandon();
    const third = database.beginAhead();
    assert.ok(third, 'a slot is free again once one is abandoned');
    second.abandon();
    third.abandon();
    await eventually(async () => (await sessions('ahead-bounded', 'idle in transaction')).length === 0);
    for (let i = 0; i < 4; i++) held.push(await database.pool.connect());
    assert.equal(database.beginAhead(), undefined, 'no connection is free');
  } finally {
    for (const client of held) client.release();
    await database.close();
  }
});

test('a connection whose backend went away while held ahead is replaced, and the work still runs', async () => {
  const database = smallDatabase(4, 'ahead-broken');
  try {
    const ahead = database.beginAhead()!;
    let begun: number[] = [];
    await eventually(async () => (begun = await sessions('ahead-broken', 'idle in transaction')).length === 1);
    await db.database.query('SELECT pg_terminate_backend($1)', [begun[0]]);
    await eventually(async () => (await sessions('ahead-broken', 'idle in transaction')).length === 0);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the client notices its socket closed
    const pid = await noteAndTellBackend(database, 2, ahead);
    assert.notEqual(pid, begun[0]);
    assert.equal((await db.database.query('SELECT FROM ahead_note WHERE n = 2')).rowCount, 1);
  } finally {
    await database.close();
  }
});

test('a transaction of another isolation level does not take it; a retried one begins afresh', async () => {
  const database = smallDatabase(4, 'ahead-isolation');
  try {
    const ahead = database.beginAhead('read committed')!;
    let begun: number[] = [];
    await eventually(async () => (begun = await sessions('ahead-isolation', 'idle in transaction')).length === 1);
    try {
      const level = await database.transaction(
        async (tx) => (await tx.query<{ transaction_isolation: string }>('SHOW transaction_isolation')).rows[0]!.transaction_isolation,
        'serializable',
        ahead,
      );
      assert.equal(level, 'serializable');
      assert.equal((await sessions('ahead-isolation', 'idle in transaction')).length, 1, 'the connection begun ahead was left alone');
    } finally {
      ahead.abandon(); // its owner gives it back, as the C-STORE handler does whatever happens
    }
    // Out of its transaction before the next one begins, so that the session found below is the new one.
    await eventually(async () => (await sessions('ahead-isolation', 'idle in transaction')).length === 0);

    const retried = database.beginAhead()!;
    await eventually(async () => (begun = await sessions('ahead-isolation', 'idle in transaction')).length === 1);
    const pids: number[] = [];
    const inTransactionBlock: boolean[] = [];
    await database.transaction(async (tx) => {
      pids.push((await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
      // SET LOCAL only holds inside a transaction block (outside one it warns and does nothing).
      await tx.query("SET LOCAL statement_timeout = '12345ms'");
      inTransactionBlock.push((await tx.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows[0]!.statement_timeout === '12345ms');
      // A deadlock reported on the first attempt only: the retry must begin its own transaction.
      if (pids.length === 1) throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
    }, 'read committed', retried);
    assert.equal(pids[0], begun[0], 'the first attempt ran on the connection begun ahead');
    assert.deepEqual(inTransactionBlock, [true, true], 'both attempts ran inside BEGIN');
  } finally {
    await database.close();
  }
});
