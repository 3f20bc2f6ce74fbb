import type { Database, TransactionAhead } from '../../storage/database.ts';
import { GroupedTransactions, type TransactionWork } from '../../storage/grouped-transactions.ts';

/**
 * The index transactions of concurrent stores (C-STORE associations, STOW-RS requests) of one
 * process, committed together: the stores that finish their transfers while a group runs share
 * the next BEGIN, COMMIT and WAL flush. Each store's work still waits for its own file and folder
 * entry to be durable before it returns, and its answer waits for the COMMIT, as alone.
 *
 * One group at a time: a group's instances lock their study rows in arrival order, so two groups
 * side by side could lock two studies in opposite orders.
 */
export interface IndexCommits {
  run<T>(work: TransactionWork<T>, ahead: TransactionAhead | undefined): Promise<T>;
  /** Stores begun and not yet finished; a store begins its transaction ahead only when alone. */
  storing: number;
}

const byDatabase = new WeakMap<Database, IndexCommits>();

export function indexCommits(database: Database): IndexCommits {
  let commits = byDatabase.get(database);
  if (!commits) {
    const groups = new GroupedTransactions(database, { maxInFlight: 1, spreadAfterMs: 0, maxGroup: 16 });
    commits = { run: (work, ahead) => groups.run(work, ahead), storing: 0 };
    byDatabase.set(database, commits);
  }
  return commits;
}
