import type pg from 'pg';

/**
 * A pooled connection on which BEGIN was sent ahead of the work that will use it, so that its
 * round trip overlaps something else: a C-STORE begins while its dataset is still arriving, and
 * its first statement then goes out as soon as the dataset is checked. Under READ COMMITTED a
 * transaction takes its snapshot and transaction id at its first statement, not at BEGIN, so a
 * connection held this way has read, written and locked nothing.
 */
export class TransactionAhead {
  readonly beginStatement: string;
  readonly #client: Promise<pg.PoolClient | undefined>;
  readonly #onSettled: () => void;
  #broken = false;
  #settled = false;
  readonly #onError = () => {
    this.#broken = true;
  };

  /** `onSettled` runs once, when the connection is taken or abandoned. */
  constructor(pool: pg.Pool, beginStatement: string, onSettled: () => void) {
    this.beginStatement = beginStatement;
    this.#onSettled = onSettled;
    this.#client = this.#begin(pool);
  }

  async #begin(pool: pg.Pool): Promise<pg.PoolClient | undefined> {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch {
      return undefined; // the transaction connects by itself and reports the failure
    }
    // A checked-out client without an 'error' listener would take the process down if its backend went away.
    client.on('error', this.#onError);
    try {
      await client.query(this.beginStatement);
      return client;
    } catch {
      client.off('error', this.#onError);
      client.release(true);
      return undefined;
    }
  }

  /** The connection inside BEGIN, once, for the transaction that runs the work; undefined when it could not begin. */
  async take(): Promise<pg.PoolClient | undefined> {
    if (!this.#settle()) return undefined;
    const client = await this.#client;
    if (!client) return undefined;
    client.off('error', this.#onError);
    if (!this.#broken) return client;
    client.release(true);
    return undefined;
  }

  /** Gives the connection back unused (ROLLBACK, then release); nothing once taken. Never throws. */
  abandon(): void {
    if (!this.#settle()) return;
    void this.#client.then(async (client) => {
      if (!client) return;
      let broken = this.#broken;
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      client.off('error', this.#onError);
      client.release(broken);
    });
  }

  /** Marks it taken or abandoned, once: false when it already was. */
  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#onSettled();
    return true;
  }
}
