/**
 * Writes refused traffic (refused-traffic.ts) so that a flood cannot fill the disk:
 *
 * - rate: the first event of a (site, surface, kind, address) in each minute becomes a row; the
 *   others of that minute are counted in memory and added to that row's `suppressed` column a
 *   couple of seconds later (one UPDATE for all pending counts);
 * - breadth: at most `maxKeysPerWindow` rows per minute per process; past that, events are only
 *   counted (`overflow`), so a sender cycling through addresses is bounded too;
 * - size: rows older than `retentionDays` (unless their site has a retention of its own, which the
 *   data lifecycle job applies) and rows beyond `maxRows` (oldest first) are deleted by the recorder itself, at most every `purgeEveryMs` and whenever it has written a tenth of
 *   `maxRows` since its last purge.
 *
 * Recording never delays nor fails the refusal it describes: `record` returns at once and a
 * database failure drops the event (the surface has logged the refusal already).
 *
 * One recorder per Database (a WeakMap, not a global): each surface of a process reaches the same
 * one through the database it already holds, so the hooks in the surfaces stay one line long.
 */
import type { Queryable } from '../../storage/database.ts';
import type { RefusedEvent } from './refused-traffic.ts';

export interface RefusedTrafficBounds {
  windowMs: number;
  maxKeysPerWindow: number;
  retentionDays: number;
  maxRows: number;
  flushAfterMs: number;
  purgeEveryMs: number;
}

export const defaultRefusedTrafficBounds: RefusedTrafficBounds = {
  windowMs: 60_000,
  maxKeysPerWindow: 2_000,
  retentionDays: 30,
  maxRows: 100_000,
  flushAfterMs: 2_000,
  purgeEveryMs: 10 * 60_000,
};

interface WindowEntry {
  row: Promise<string | undefined>;
  pending: number;
}

export class RefusedTrafficRecorder {
  readonly bounds: RefusedTrafficBounds;
  readonly #db: Queryable;
  #window = -1;
  #entries = new Map<string, WindowEntry>();
  #flushTimer: NodeJS.Timeout | undefined;
  #inFlight = new Set<Promise<unknown>>();
  #lastPurge = 0;
  #writtenSincePurge = 0;
  /** Events not written because the minute's row budget was spent (process lifetime). */
  overflow = 0;

  constructor(db: Queryable, bounds: RefusedTrafficBounds = defaultRefusedTrafficBounds) {
    this.#db = db;
    this.bounds = bounds;
  }

  /** True when the event got a row of its own (the first of its minute), false when only counted. */
  record(event: RefusedEvent): boolean {
    const window = Math.floor(Date.now() / this.bounds.windowMs);
    if (window !== this.#window) {
      this.#track(this.#flush(this.#entries));
      this.#entries = new Map();
      this.#window = window;
    }
    const key = [event.siteId ?? '', event.surface, event.kind, event.remoteAddress].join('\u0000');
    const entry = this.#entries.get(key);
    if (entry) {
      entry.pending += 1;
      this.#flushTimer ??= setTimeout(() => {
        this.#flushTimer = undefined;
        this.#track(this.#flush(this.#entries));
      }, this.bounds.flushAfterMs).unref();
      return false;
    }
    if (this.#entries.size >= this.bounds.maxKeysPerWindow) {
      this.overflow += 1;
      return false;
    }
    const row = this.#insert(event);
    this.#entries.set(key, { row, pending: 0 });
    this.#track(row);
    return true;
  }

  /** Writes every pending count and waits for every write begun (tests, shutdown). */
  async settle(): Promise<void> {
    if (this.#flushTimer) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#track(this.#flush(this.#entries));
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  #track(work: Promise<unknown>): void {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  async #insert(event: RefusedEvent): Promise<string | undefined> {
    try {
      const { rows } = await this.#db.query<{ id: string }>(
        'INSERT INTO refused_traffic (site_id, surface, kind, remote_address, reason, details) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::text AS id',
        [event.siteId ?? null, event.surface, event.kind, event.remoteAddress, event.reason.slice(0, 500), JSON.stringify(event.details ?? {})],
      );
      this.#writtenSincePurge += 1;
      const now = Date.now();
      if (now - this.#lastPurge >= this.bounds.purgeEveryMs || this.#writtenSincePurge >= Math.max(1, Math.floor(this.bounds.maxRows / 10))) {
        this.#lastPurge = now;
        this.#writtenSincePurge = 0;
        this.#track(this.#purge());
      }
      return rows[0]!.id;
    } catch {
      return undefined;
    }
  }

  async #flush(entries: Map<string, WindowEntry>): Promise<void> {
    const due = [...entries.values()].filter((entry) => entry.pending > 0);
    if (due.length === 0) return;
    const counts = due.map((entry) => {
      const count = entry.pending;
      entry.pending = 0;
      return count;
    });
    const ids = await Promise.all(due.map((entry) => entry.row));
    const written = ids.flatMap((id, index) => (id === undefined ? [] : [{ id, count: counts[index]! }]));
    if (written.length === 0) return;
    await this.#db
      .query(
        `UPDATE refused_traffic r SET suppressed = r.suppressed + c.count, last_at = now()
           FROM unnest($1::bigint[], $2::int[]) AS c(id, count) WHERE r.id = c.id`,
        [written.map((w) => w.id), written.map((w) => w.count)],
      )
      .catch(() => undefined);
  }

  async #purge(): Promise<void> {
    // Rows of a site with its own retention are the data lifecycle job's (retention/refused-traffic-purge.ts).
    await this.#db
      .query(
        `DELETE FROM refused_traffic r WHERE occurred_at < now() - make_interval(days => $1)
            AND NOT EXISTS (SELECT 1 FROM site s WHERE s.id = r.site_id AND s.refused_traffic_retention_days IS NOT NULL)`,
        [this.bounds.retentionDays],
      )
      .catch(() => undefined);
    await this.#db
      .query('DELETE FROM refused_traffic WHERE id <= (SELECT id FROM refused_traffic ORDER BY id DESC OFFSET $1 LIMIT 1)', [this.bounds.maxRows])
      .catch(() => undefined);
  }
}

const recorders = new WeakMap<object, RefusedTrafficRecorder>();

/** The recorder of this database (made on first use; `bounds` apply only then). */
export function refusedTrafficRecorder(db: Queryable, bounds?: RefusedTrafficBounds): RefusedTrafficRecorder {
  let recorder = recorders.get(db);
  if (!recorder) {
    recorder = new RefusedTrafficRecorder(db, bounds);
    recorders.set(db, recorder);
  }
  return recorder;
}

/** Records one refusal, bounded as above; returns at once, true when it got a row of its own. */
export function recordRefused(db: Queryable, event: RefusedEvent): boolean {
  return refusedTrafficRecorder(db).record(event);
}
