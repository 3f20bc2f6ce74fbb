import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TransientStorageError } from '../../src/storage/errors.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('a backend terminated in the middle of a transaction is a transient error, not a crash', async () => {
  await assert.rejects(
    db.database.transaction(async (tx) => {
      const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await db.database.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await tx.query('SELECT 1');
    }),
    TransientStorageError,
  );
  // The pool replaced the broken connection: the next transaction works.
  const value = await db.database.transaction(async (tx) => (await tx.query<{ n: number }>('SELECT 41 + 1 AS n')).rows[0]!.n);
  assert.equal(value, 42);
});

test('serialization failures are retried with a fresh transaction', async () => {
  await db.database.query('CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)');
  await db.database.query('INSERT INTO counter VALUES (1, 0)');
  await Promise.all(
    Array.from({ length: 8 }, () =>
      db.database.transaction(async (tx) => {
        const { rows } = await tx.query<{ n: number }>('SELECT n FROM counter WHERE id = 1');
        await tx.query('UPDATE counter SET n = $1 WHERE id = 1', [rows[0]!.n + 1]);
      }, 'serializable'),
    ),
  );
  const { rows } = await db.database.query<{ n: number }>('SELECT n FROM counter WHERE id = 1');
  assert.equal(rows[0]!.n, 8);
});

test('work that throws is rolled back', async () => {
  await db.database.query('CREATE TABLE note (text text)');
  await assert.rejects(
    db.database.transaction(async (tx) => {
      await tx.query("INSERT INTO note VALUES ('half')");
      throw new Error('changed my mind');
    }),
    /changed my mind/,
  );
  assert.equal((await db.database.query('SELECT 1 FROM note')).rowCount, 0);
});

test('connection trouble is transient; a protocol violation (a bug of ours) is not', async () => {
  const { isTransientDatabaseError } = await import('../../src/storage/errors.ts');
  const withCode = (code: string) => Object.assign(new Error('x'), { code });
  assert.equal(isTransientDatabaseError(withCode('08006')), true);
  assert.equal(isTransientDatabaseError(withCode('57P01')), true);
  assert.equal(isTransientDatabaseError(withCode('ECONNREFUSED')), true);
  assert.equal(isTransientDatabaseError(withCode('08P01')), false);
  assert.equal(isTransientDatabaseError(withCode('23505')), false);
});
