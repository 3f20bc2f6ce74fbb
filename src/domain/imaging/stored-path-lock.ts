import type { Database, Queryable } from '../../storage/database.ts';
import { canonicalStoragePath } from './stored-instance-file.ts';

/** The first key of the two-key advisory locks on stored paths (any constant; the same everywhere). */
const storedPathLockClass = 7_355_608;

/**
 * Holds, until the transaction ends, the lock of one final name in the shared storage. Taken by
 * the two things that remove a file at a final name the index does not point at: a store that
 * finds the name taken and replaces the file (under its claim of the SOP Instance UID), and a
 * node's start-up recovery removing a file it linked there before a crash. Without it, a recovery
 * that found its file unindexed could remove, an instant later, the file another node's store had
 * just put in its place and indexed. Rare paths both: a store whose name is free never takes it.
 */
export async function lockStoredPath(tx: Queryable, storagePath: string): Promise<void> {
  await tx.query({ name: 'stored-path-lock', text: 'SELECT pg_advisory_xact_lock($1, hashtext($2))', values: [storedPathLockClass, canonicalStoragePath(storagePath)] });
}

/** Runs `work` while holding the stored path's lock (a transaction of its own). */
export function whileStoredPathLocked<T>(database: Database, storagePath: string, work: () => Promise<T>): Promise<T> {
  return database.transaction(async (tx) => {
    await lockStoredPath(tx, storagePath);
    return work();
  });
}
