import { EventEmitter } from 'node:events';
import pg from 'pg';

/**
 * Tells this process that another transaction, of any process, committed a change that caches
 * depend on: triggers notify a PostgreSQL channel at commit (LISTEN/NOTIFY), and one dedicated
 * connection listens. While that connection is down a change could go unseen, so token() is
 * undefined and caches must go to the database; every reconnection counts as a change.
 */
export class ChangeFeed {
  readonly #connectionString: string;
  readonly #channel: string;
  readonly #events = new EventEmitter();
  #generation = 0;
  #listening = false;
  #started = false;
  #closed = false;
  #client: pg.Client | undefined;
  #retryDelayMs = 500;
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(connectionString: string, channel: string) {
    this.#connectionString = connectionString;
    this.#channel = channel;
  }

  /**
   * A value that stays the same until a change is notified. Read it before reading the database
   * and store it with what was read: a change committed meanwhile makes the entry stale at once.
   */
  token(): number | undefined {
    if (!this.#started) this.#start();
    return this.#listening ? this.#generation : undefined;
  }

  /** A change this process committed itself: its own caches need not wait for the notification. */
  noteLocalChange(): void {
    this.#changed();
  }

  /** Resolves once a change after the one `token` stood for has been notified. */
  async changedSince(token: number): Promise<void> {
    while (this.#generation === token) await new Promise<void>((resolve) => this.#events.once('change', () => resolve()));
  }

  /** Resolves once the feed listens (tests use it to reach the cached path deterministically). */
  async listening(): Promise<void> {
    if (!this.#started) this.#start();
    if (this.#listening) return;
    await new Promise<void>((resolve) => this.#events.once('listening', () => resolve()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#listening = false;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  #start(): void {
    this.#started = true;
    void this.#connect();
  }

  async #connect(): Promise<void> {
    if (this.#closed) return;
    const client = new pg.Client({ connectionString: this.#connectionString, application_name: 'clinical-gateway change feed' });
    this.#client = client;
    // Errors must not reach the process: a lost server only means caches are bypassed a while.
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    client.on('notification', () => this.#changed());
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.#channel)}`);
    } catch {
      this.#lost(client);
      return;
    }
    if (this.#closed || this.#client !== client) return;
    this.#retryDelayMs = 500;
    this.#changed();
    this.#listening = true;
    this.#events.emit('listening');
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#listening = false;
    this.#changed();
    client.end().catch(() => {});
    if (this.#closed) return;
    this.#retryTimer = setTimeout(() => void this.#connect(), this.#retryDelayMs);
    this.#retryTimer.unref();
    this.#retryDelayMs = Math.min(this.#retryDelayMs * 2, 10_000);
  }

  #changed(): void {
    this.#generation++;
    this.#events.emit('change');
  }
}
