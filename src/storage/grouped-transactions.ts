import { BatchQueue, type Settled } from './batch-queue.ts';
import type { Database, Transaction, TransactionAhead } from './database.ts';
import { isTransientDatabaseError } from './errors.ts';

/** One caller's share of a transaction: it must have no side effects outside the database. */
export type TransactionWork<T> = (tx: Transaction) => Promise<T>;

export interface GroupedTransactionOptions {
  /** Groups running at once (each on a connection of its own). */
  maxInFlight: number;
  /** Milliseconds the newest group must have run before another starts beside it. */
  spreadAfterMs: number;
  /** Works per group at most. */
  maxGroup: number;
}

/**
 * Runs the works of concurrent callers in one transaction, one after another, and commits them
 * together: each caller's promise settles only after the COMMIT that made its work durable, so a
 * caller that acknowledges on resolution still acknowledges only what is committed, while many
 * share one BEGIN, one COMMIT and one WAL flush. The works of one event-loop turn, and those
 * arriving while a group runs, leave together (BatchQueue); a lone work runs alone.
 *
 * When a group fails on anything but an unavailable database (one work's error, a duplicate key,
 * a deadlock past the retries), nothing of it was committed, and each work is run again alone, in
 * the order it came, in a transaction of its own: the others commit, and the failing one gets its
 * own error, exactly as if it had come alone. A caller with several works in order (one
 * connection's messages) must wait for each before adding the next; then its order is kept.
 */
interface QueuedWork {
  work: TransactionWork<unknown>;
  ahead: TransactionAhead | undefined;
}

export class GroupedTransactions {
  readonly #database: Database;
  readonly #queue: BatchQueue<QueuedWork, unknown>;
  #running = 0;
  #queued = 0;
  /** Groups committed with more than one work, for the tests and the bench's notes. */
  sharedCommits = 0;

  constructor(database: Database, options: GroupedTransactionOptions) {
    this.#database = database;
    this.#queue = new BatchQueue<QueuedWork, unknown>({
      maxInFlight: options.maxInFlight,
      spreadAfterMs: options.spreadAfterMs,
      maxBatch: options.maxGroup,
      run: (works) => this.#runGroup(works),
    });
  }

  /**
   * `ahead`: a connection on which BEGIN was sent ahead for this work. The group runs on the first
   * one of its works that has one and gives the others back, so a lone work keeps its head start.
   */
  run<T>(work: TransactionWork<T>, ahead?: TransactionAhead): Promise<T> {
    this.#queued++;
    return this.#queue.add({ work: work as TransactionWork<unknown>, ahead }) as Promise<T>;
  }

  /** Works inside a running group, and works waiting for one. */
  get pending(): { running: number; queued: number } {
    return { running: this.#running, queued: this.#queued };
  }

  async #runGroup(queued: readonly QueuedWork[]): Promise<Settled<unknown>[]> {
    const works = queued.map((item) => item.work);
    const ahead = queued.find((item) => item.ahead)?.ahead;
    for (const item of queued) if (item.ahead !== ahead) item.ahead?.abandon();
    this.#queued -= works.length;
    this.#running += works.length;
    try {
      if (works.length === 1) return [await this.#alone(works[0]!, ahead)];
      try {
        const values = await this.#database.transaction(async (tx) => {
          const results: unknown[] = [];
          for (const work of works) results.push(await work(tx));
          return results;
        }, 'read committed', ahead);
        this.sharedCommits++;
        return values.map((value) => ({ ok: true, value }));
      } catch (error) {
        // Every work would meet the same outage alone: answer them all now.
        if (isTransientDatabaseError(error)) return works.map(() => ({ ok: false, error }));
      }
      const outcomes: Settled<unknown>[] = [];
      for (const work of works) outcomes.push(await this.#alone(work));
      return outcomes;
    } finally {
      this.#running -= works.length;
    }
  }

  async #alone(work: TransactionWork<unknown>, ahead?: TransactionAhead): Promise<Settled<unknown>> {
    try {
      return { ok: true, value: await this.#database.transaction(work, 'read committed', ahead) };
    } catch (error) {
      return { ok: false, error };
    }
  }
}

const groups = new WeakMap<Database, GroupedTransactions>();

// Up to 8 groups at once, each started as soon as its works arrive: a message waits for no other
// group to finish, and the messages of one event-loop turn still share a commit. Groups grow only
// past 8 running at once. Held to one group at a time (a second beside it after 25 ms), every
// message of 8 connections ran its statements in sequence on one database connection behind the
// others': ADT^A01 at 8 connections gained 1.20x with one worker and 1.14x with two in
// alternating runs (docs/architecture/performance.md).
const defaults: GroupedTransactionOptions = { maxInFlight: 8, spreadAfterMs: 0, maxGroup: 32 };

/**
 * The process's grouped transactions on `database` (one queue per pool). `options` apply only
 * when this is the first call for that pool (a test that needs one group at a time).
 */
export function groupedTransactions(database: Database, options: GroupedTransactionOptions = defaults): GroupedTransactions {
  let group = groups.get(database);
  if (!group) {
    group = new GroupedTransactions(database, options);
    groups.set(database, group);
  }
  return group;
}
