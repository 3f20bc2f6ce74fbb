import type { Database } from './database.ts';

/**
 * PostgreSQL advisory lock keys of the work that runs on one process at a time across every node
 * of a database. Any constants work; they only have to be the same everywhere. 7355608001 is the
 * migrations' (migrations.ts), 7355608002 the first-run admin's (src/server/first-run.ts).
 */
export const onceAcrossNodes = {
  plannerStatistics: 7_355_608_003,
  dataAccessRetention: 7_355_608_004,
  dataLifecycle: 7_355_608_005,
} as const;

/**
 * Runs `work` unless another process of any node is running the same job now, in which case it
 * is skipped (undefined): the job is periodic, and the other run does what this one would. The
 * lock is a session lock on a connection held for the job's length, so it goes with the process
 * if the process dies.
 */
export async function runIfNoOtherNodeIs<T>(database: Database, key: number, work: () => Promise<T>): Promise<T | undefined> {
  const client = await database.pool.connect();
  let broken = false;
  const onError = () => {
    broken = true;
  };
  client.on('error', onError);
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!rows[0]!.locked) return undefined;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.off('error', onError);
    // A connection whose unlock failed may still hold the lock: it is closed, not pooled.
    client.release(broken);
  }
}
