import pg from 'pg';
import { ChangeFeed } from './change-feed.ts';
import { TransientStorageError, isRetryableTransactionError, isTransientDatabaseError } from './errors.ts';

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
  applicationName?: string;
}

const maxTransactionAttempts = 5;

/**
 * The one PostgreSQL pool of the process. Every failure that means "the database is not there
 * right now" leaves here as TransientStorageError, so callers need no knowledge of pg's errors.
 */
export class Database implements Queryable {
  readonly pool: pg.Pool;
  /** Committed changes to credentials (API keys, users, sites, integration clients), for caches. */
  readonly credentialChanges: ChangeFeed;
  #closed = false;

  constructor(options: DatabaseOptions) {
    this.credentialChanges = new ChangeFeed(options.connectionString, 'credentials_changed');
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.maxConnections ?? 10,
      application_name: options.applicationName ?? 'clinical-gateway',
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
    });
    // An idle client losing its server must not crash the process; the next query reconnects.
    this.pool.on('error', () => {});
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
  async transaction<T>(work: (tx: Transaction) => Promise<T>, isolation: IsolationLevel = 'read committed'): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.pool.connect();
      } catch (error) {
        throw translate(error);
      }
      let broken = false;
      // While checked out, a client has no pool listener: a backend terminated mid-transaction
      // would emit an unhandled 'error' and take the process down. The failing query rejects too.
      const onClientError = () => {
        broken = true;
      };
      client.on('error', onClientError);
      try {
        await client.query(`BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`);
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
        if (isRetryableTransactionError(error) && attempt < maxTransactionAttempts) {
          await delay(attempt * 10 + Math.random() * 20);
          continue;
        }
        if (isTransientDatabaseError(error)) broken = true;
        throw translate(error);
      } finally {
        client.off('error', onClientError);
        client.release(broken);
      }
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
    await this.pool.end();
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

function translate(error: unknown): unknown {
  if (error instanceof TransientStorageError) return error;
  if (isTransientDatabaseError(error)) {
    return new TransientStorageError('the database is unavailable', { cause: error });
  }
  return error;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
