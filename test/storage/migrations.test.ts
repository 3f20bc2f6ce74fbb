import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { migrate } from '../../src/storage/migrations.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase({ migrate: false });
});
after(() => db.drop());

test('migrations apply once and are idempotent, also when run concurrently', async () => {
  const [first, second] = await Promise.all([migrate(db.database), migrate(db.database)]);
  assert.equal(first.applied.length + second.applied.length > 0, true);
  assert.equal(Math.min(first.applied.length, second.applied.length), 0);
  const third = await migrate(db.database);
  assert.deepEqual(third.applied, []);
  const { rows } = await db.database.query('SELECT count(*)::int AS n FROM schema_migration');
  assert.equal(rows[0]!.n, third.alreadyApplied);
});
