import type { Queryable, Transaction } from '../../storage/database.ts';

/**
 * Runs `work` in the caller's transaction when given one (an HL7 message is applied whole or not
 * at all, so the store must not commit on its own), else in a transaction of its own.
 */
export async function inTransaction<T>(db: Queryable, work: (tx: Queryable) => Promise<T>): Promise<T> {
  if ((db as Partial<Transaction>).inTransaction === true) return work(db);
  const database = db as Queryable & { transaction?: (fn: (tx: Transaction) => Promise<T>) => Promise<T> };
  if (typeof database.transaction === 'function') return database.transaction((tx) => work(tx));
  // A bare client: the caller manages its transaction.
  return work(db);
}
