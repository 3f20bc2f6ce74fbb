import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import type { SearchBudget, Transaction } from '../../storage/database.ts';
import { StatementTimeoutError, isStatementTimeout } from '../../storage/errors.ts';

/**
 * The reads of a transaction Bundle run inside its database transaction, after its writes and
 * before its commit (https://hl7.org/fhir/R4/http.html#transaction), through the same routes as
 * reads of their own. The routes take their connection from here: while a Bundle's read runs in
 * this process, its statements go to the Bundle's transaction instead of the pools, so they see
 * the transaction's own writes and nothing committed in between can slip into the answer.
 */
export interface TransactionScope {
  /** The Bundle's transaction, as the reads' statements reach it. */
  readonly tx: Transaction;
  /** The search bound that applies to every statement of the reads. */
  readonly budget: SearchBudget;
  /**
   * The first statement of a read that failed. PostgreSQL has then aborted the transaction, so
   * whatever the read answered, the Bundle fails whole.
   */
  failure: unknown;
}

/** One per FHIR origin (FhirContext): the scope of the read running in the current async context. */
export type TransactionScopes = AsyncLocalStorage<TransactionScope>;

export function createTransactionScopes(): TransactionScopes {
  return new AsyncLocalStorage<TransactionScope>();
}

/**
 * A scope over `tx` for the reads of a Bundle. Their statements are bounded like a search's
 * (statement_timeout and work_mem, set for the rest of the transaction: only the reads and the
 * commit follow the writes).
 */
export async function openTransactionScope(tx: Transaction, budget: SearchBudget): Promise<TransactionScope> {
  await tx.query("SELECT set_config('statement_timeout', $1, true), set_config('work_mem', $2, true)", [String(Math.trunc(budget.timeoutMs)), budget.workMem]);
  const scope: TransactionScope = {
    budget,
    failure: undefined,
    tx: {
      inTransaction: true,
      async query<Row extends pg.QueryResultRow>(text: string | pg.QueryConfig, values?: unknown[]) {
        try {
          return await tx.query<Row>(text, values);
        } catch (error) {
          scope.failure ??= isStatementTimeout(error) ? new StatementTimeoutError(budget.timeoutMs, { cause: error }) : error;
          throw scope.failure;
        }
      },
    },
  };
  return scope;
}
