import pg from 'pg';
import { ChangeFeed } from './change-feed.ts';
import { StatementTimeoutError, TransientStorageError, isRetryableTransactionError, isStatementTimeout, isTransientDatabaseError } from './errors.ts';
import { TransactionAhead } from './transaction-ahead.ts';

export type { TransactionAhead } from './transaction-ahead.ts';

/** Anything that runs SQL: the pool or a transaction's client. */
export interface Queryable {
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>>;
}

/**
 * One SQL statement with its values, named so that each connection prepares it once; for code
 * that builds a statement for another to send (as part of its own, for instance).
 */
export interface NamedStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** A client inside BEGIN … COMMIT. Distinct type so that code needing a transaction says so. */
export interface Transaction extends Queryable {
  readonly inTransaction: true;
}

export type IsolationLevel = 'read committed' | 'repeatable read' | 'serializable';

export interface DatabaseOptions {
  connectionString: string;
  maxConnections?: number;
  /** Connections of the separate pool searches run on (see `search`). */
  searchConnections?: number;
  applicationName?: string;
}

/** What bounds one search's work in PostgreSQL (docs/security.md). */
export interface SearchBudget {
  /** statement_timeout, per statement of the search. */
  timeoutMs: number;
  /** work_mem for sorts and hashes, a PostgreSQL size such as 4MB. */
  workMem: string;
}

const maxTransactionAttempts = 5;

/**
 * The one PostgreSQL pool of the process. Every failure that means "the database is not there
 * right now" leaves here as TransientStorageError, so callers need no knowledge of pg's errors.
 */
export class Database implements Queryable {
  readonly pool: pg.Pool;
  /**
   * Searches run here and nowhere else: however many searches are queued, they cannot take the
   * connections HL7, DICOM and MPPS intake need from `pool` (issue 26 point 2).
   */
  readonly searchPool: pg.Pool;
  /** Committed changes to credentials (API keys, users, sites, integration clients), for caches. */
  readonly credentialChanges: ChangeFeed;
  readonly #maxConnections: number;
  /** Connections begun ahead and not yet taken or abandoned. */
  #heldAhead = 0;
  #closed = false;

  constructor(options: DatabaseOptions) {
    this.#maxConnections = options.maxConnections ?? 10;
    this.credentialChanges = new ChangeFeed(options.connectionString, 'credentials_changed');
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: this.#maxConnections,
      application_name: options.applicationName ?? 'clinical-gateway',
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
    });
    this.searchPool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.searchConnections ?? 5,
      application_name: `${options.applicationName ?? 'clinical-gateway'} search`,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client losing its server must not crash the process; the next query reconnects.
    this.pool.on('error', () => {});
    this.searchPool.on('error', () => {});
  }

  async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<Row>> {
    try {
      return await this.pool.query<Row>(text as string, values);
    } catch (error) {
      throw translate(error);
    }
  }

  /**
   * Runs `work` in one transaction and commits it. Serialization failures and deadlocks are
   * retried with a fresh transaction, so `work` must not have side effects outside the database.
   */
  async transaction<T>(work: (tx: Transaction) => Promise<T>, isolation: IsolationLevel = 'read committed', ahead?: TransactionAhead): Promise<T> {
    const begin = beginStatement(isolation);
    for (let attempt = 1; ; attempt++) {
      // Only a first attempt can use a connection begun ahead: a retry needs a fresh transaction.
      let client = attempt === 1 && ahead?.beginStatement === begin ? await ahead.take() : undefined;
      const begun = client !== undefined;
      try {
        client ??= await this.pool.connect();
      } catch (error) {
        throw translate(error);
      }
      try {
        return await runOn(client, begun ? undefined : begin, work);
      } catch (error) {
        if (isRetryableTransactionError(error) && attempt < maxTransactionAttempts) {
          await delay(attempt * 10 + Math.random() * 20);
          continue;
        }
        throw translate(error);
      }
    }
  }

  /**
   * Sends BEGIN on a connection of its own now, for a transaction whose work is not ready yet
   * (pass it to `transaction`, or `abandon` it). Undefined when no connection is free or half the
   * pool is already held this way: a connection is never held ahead while anyone waits for one,
   * and other work always finds the other half.
   */
  beginAhead(isolation: IsolationLevel = 'read committed'): TransactionAhead | undefined {
    const pool = this.pool;
    const full = pool.idleCount === 0 && pool.totalCount >= this.#maxConnections;
    if (this.#closed || full || pool.waitingCount > 0 || this.#heldAhead >= this.#maxConnections / 2) return undefined;
    this.#heldAhead++;
    return new TransactionAhead(pool, beginStatement(isolation), () => this.#heldAhead--);
  }

  /**
   * Runs a search's statements in one read-only transaction on the search pool, each statement
   * bounded by the budget's statement_timeout and work_mem. A statement cancelled by the timeout
   * leaves as StatementTimeoutError.
   */
  async search<T>(budget: SearchBudget, work: (tx: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.searchPool.connect();
    } catch (error) {
      throw translate(error);
    }
    try {
      // SET LOCAL takes no parameters; both values are validated numbers and sizes (config/limits.ts).
      const begin = `BEGIN READ ONLY; SET LOCAL statement_timeout = ${Math.trunc(budget.timeoutMs)}; SET LOCAL work_mem = '${budget.workMem.replace(/[^0-9A-Za-z]/g, '')}'`;
      return await runOn(client, begin, work);
    } catch (error) {
      if (isStatementTimeout(error)) throw new StatementTimeoutError(budget.timeoutMs, { cause: error });
      throw translate(error);
    }
  }

  /** True when the server answers a trivial query. */
  async isReachable(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.credentialChanges.close();
    await Promise.all([this.pool.end(), this.searchPool.end()]);
  }
}

/**
 * Called after a credential change committed through `db` (outside a transaction), so that the
 * very next request this process serves already sees it; other processes learn of it through
 * the notification the change's trigger sends.
 */
export function noteCredentialChange(db: Queryable): void {
  if (db instanceof Database) db.credentialChanges.noteLocalChange();
}

/**
 * Runs `work` between `begin` (undefined: already begun) and COMMIT on a checked-out client, rolls
 * back on failure and releases the client, discarding it when its connection may be unusable.
 */
async function runOn<T>(client: pg.PoolClient, begin: string | undefined, work: (tx: Transaction) => Promise<T>): Promise<T> {
  let broken = false;
  // While checked out, a client has no pool listener: a backend terminated mid-transaction
  // would emit an unhandled 'error' and take the process down. The failing query rejects too.
  const onClientError = () => {
    broken = true;
  };
  client.on('error', onClientError);
  try {
    if (begin !== undefined) await client.query(begin);
    const tx = Object.assign(Object.create(null), {
      inTransaction: true as const,
      query: (text: string | pg.QueryConfig, values?: unknown[]) => client.query(text as string, values),
    }) as Transaction;
    const result = await work(tx);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    if (isTransientDatabaseError(error)) broken = true;
    throw error;
  } finally {
    client.off('error', onClientError);
    client.release(broken);
  }
}

function translate(error: unknown): unknown {
  if (error instanceof TransientStorageError) return error;
  if (isTransientDatabaseError(error)) {
    return new TransientStorageError('the database is unavailable', { cause: error });
  }
  return error;
}

function beginStatement(isolation: IsolationLevel): string {
  return `BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
