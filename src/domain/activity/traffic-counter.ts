/**
 * Requests per API key and DICOM associations and instances per calling AE title, counted in
 * memory and added to traffic_minute in one upsert every few seconds (migration 0790). Counting
 * costs a map lookup on the hot path; a write per request would cost a round trip and a row.
 *
 * Bounded: at most maxPendingSenders distinct (site, sender, surface, measure) per flush, later
 * ones of that flush dropped and logged; rows older than two days deleted once a minute. A flush
 * that fails (database away) keeps its counts for the next one, up to the same bound.
 */
import type { Queryable } from '../../storage/database.ts';

export type TrafficSenderKind = 'api-key' | 'ae-title';
export type TrafficSurface = 'fhir' | 'hl7' | 'mpps' | 'dicomweb' | 'dicom';
export type TrafficMeasure = 'request' | 'association' | 'instance';

export interface TrafficEvent {
  siteId: string;
  senderKind: TrafficSenderKind;
  sender: string;
  surface: TrafficSurface;
  measure: TrafficMeasure;
  ok: boolean;
}

interface Pending extends Omit<TrafficEvent, 'ok'> {
  minute: number;
  accepted: number;
  errored: number;
  lastAt: number;
  lastErrorAt: number | null;
}

export const maxPendingSenders = 2_000;
export const trafficRetentionHours = 48;
const flushEveryMs = 5_000;
const pruneEveryMs = 60_000;

export interface TrafficCounterLogger {
  warn(details: object, message: string): void;
}

export class TrafficCounter {
  readonly #db: Queryable;
  readonly #logger: TrafficCounterLogger | undefined;
  #pending = new Map<string, Pending>();
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #prunedAt = 0;

  constructor(db: Queryable, logger?: TrafficCounterLogger) {
    this.#db = db;
    this.#logger = logger;
  }

  count(event: TrafficEvent, at = Date.now()): void {
    const sender = event.sender.slice(0, 64);
    if (sender === '') return;
    const minute = at - (at % 60_000);
    const key = keyOf({ ...event, sender, minute });
    let entry = this.#pending.get(key);
    if (!entry) {
      if (this.#pending.size >= maxPendingSenders) {
        this.#dropped++;
        return;
      }
      entry = { siteId: event.siteId, senderKind: event.senderKind, sender, surface: event.surface, measure: event.measure, minute, accepted: 0, errored: 0, lastAt: at, lastErrorAt: null };
      this.#pending.set(key, entry);
    }
    if (event.ok) entry.accepted++;
    else {
      entry.errored++;
      entry.lastErrorAt = at;
    }
    entry.lastAt = Math.max(entry.lastAt, at);
  }

  /** Flushes every few seconds until stop(). */
  start(): this {
    this.#timer = setInterval(() => void this.flush(), flushEveryMs);
    this.#timer.unref();
    return this;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }

  /** Adds the counts so far to traffic_minute; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    if (this.#dropped > 0) {
      this.#logger?.warn({ dropped: this.#dropped, bound: maxPendingSenders }, 'traffic counts dropped: too many distinct senders in a few seconds');
      this.#dropped = 0;
    }
    try {
      if (batch.length > 0) await upsert(this.#db, batch);
      if (Date.now() - this.#prunedAt >= pruneEveryMs) {
        this.#prunedAt = Date.now();
        await this.#db.query(`DELETE FROM traffic_minute WHERE minute < now() - make_interval(hours => $1)`, [trafficRetentionHours]);
      }
    } catch (error) {
      // Kept for the next flush (the database may be back by then), within the bound.
      for (const entry of batch) {
        const key = keyOf(entry);
        const newer = this.#pending.get(key);
        if (newer) {
          newer.accepted += entry.accepted;
          newer.errored += entry.errored;
          newer.lastErrorAt = newer.lastErrorAt ?? entry.lastErrorAt;
        } else if (this.#pending.size < maxPendingSenders) this.#pending.set(key, entry);
      }
      this.#logger?.warn({ err: error }, 'traffic counts not written; retrying');
    }
  }
}

function keyOf(entry: Omit<Pending, 'accepted' | 'errored' | 'lastAt' | 'lastErrorAt'>): string {
  return [entry.siteId, entry.minute, entry.senderKind, entry.sender, entry.surface, entry.measure].join('\u0000');
}

async function upsert(db: Queryable, batch: Pending[]): Promise<void> {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  await db.query(
    `INSERT INTO traffic_minute AS t (site_id, minute, sender_kind, sender, surface, measure, accepted, errored, last_at, last_error_at)
     SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[], $9::timestamptz[], $10::timestamptz[])
            AS u(site_id, minute, sender_kind, sender, surface, measure, accepted, errored, last_at, last_error_at)
      -- A site removed meanwhile would fail the whole batch.
      WHERE EXISTS (SELECT 1 FROM site WHERE site.id = u.site_id)
     ON CONFLICT (site_id, minute, sender_kind, sender, surface, measure) DO UPDATE
       SET accepted = t.accepted + excluded.accepted, errored = t.errored + excluded.errored,
           last_at = greatest(t.last_at, excluded.last_at), last_error_at = greatest(t.last_error_at, excluded.last_error_at)`,
    [
      batch.map((e) => e.siteId),
      batch.map((e) => iso(e.minute)),
      batch.map((e) => e.senderKind),
      batch.map((e) => e.sender),
      batch.map((e) => e.surface),
      batch.map((e) => e.measure),
      batch.map((e) => e.accepted),
      batch.map((e) => e.errored),
      batch.map((e) => iso(e.lastAt)),
      batch.map((e) => iso(e.lastErrorAt)),
    ],
  );
}
