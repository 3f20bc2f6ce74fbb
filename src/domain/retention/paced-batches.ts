/**
 * The purges' pacing: small batches, each its own short transaction, with a rest between them of
 * at least `pauseMs` and at least `restFactor` times the batch's own duration, so that intake
 * writing the same tables never waits long and keeps most of the machine whatever its speed.
 */
import type { Database } from '../../storage/database.ts';

export interface PurgeOptions {
  /** Rows per transaction. */
  batchSize?: number;
  /** Least pause between two batches, in milliseconds: room for intake's transactions. */
  pauseMs?: number;
  /**
   * The pause is also at least this many times the batch's own duration, so that the purge takes
   * at most 1 / (1 + restFactor) of the time whatever the machine's speed (default 4: a fifth).
   */
  restFactor?: number;
  /** The purge's "now" (tests); the cut-off is this minus each site's retention. */
  now?: Date;
  /** Purge this site only. */
  siteId?: string;
  /** Asked between batches: true stops the purge (the service is stopping). */
  stopped?: () => boolean;
}

export interface SitePurge {
  siteId: string;
  purged: number;
}

export const defaultPurgeBatchSize = 1_000;
export const defaultPurgePauseMs = 100;
export const defaultPurgeRestFactor = 4;

/**
 * Runs `batch(batchSize)` (which returns the rows it handled) until one handles fewer than a full
 * batch, or the purge is stopped; returns the rows handled in all.
 */
export async function inPacedBatches(options: PurgeOptions, batch: (batchSize: number) => Promise<number>): Promise<number> {
  const batchSize = options.batchSize ?? defaultPurgeBatchSize;
  const pauseMs = options.pauseMs ?? defaultPurgePauseMs;
  const restFactor = options.restFactor ?? defaultPurgeRestFactor;
  let handled = 0;
  for (;;) {
    if (options.stopped?.()) break;
    const started = performance.now();
    const count = await batch(batchSize);
    handled += count;
    if (count < batchSize) break;
    const pause = Math.max(pauseMs, (performance.now() - started) * restFactor);
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return handled;
}

/**
 * For each site with a retention in `retentionDaysColumn` (of the site table), runs `batchSql`
 * ($1 the site, $2 the cut-off instant, $3 the batch size; its row count is what it purged) in
 * paced batches; returns the sites that had something purged.
 */
export async function purgeEachSitePastRetention(database: Database, options: PurgeOptions, retentionDaysColumn: string, batchSql: string): Promise<SitePurge[]> {
  const now = options.now ?? new Date();
  const { rows: sites } = await database.query<{ id: string; days: number }>(
    `SELECT id, ${retentionDaysColumn} AS days FROM site WHERE ${retentionDaysColumn} IS NOT NULL AND ($1::uuid IS NULL OR id = $1) ORDER BY id`,
    [options.siteId ?? null],
  );
  const purges: SitePurge[] = [];
  for (const site of sites) {
    const cutoff = new Date(now.getTime() - site.days * 86_400_000);
    const purged = await inPacedBatches(options, async (batchSize) => (await database.query(batchSql, [site.id, cutoff, batchSize])).rowCount ?? 0);
    if (purged > 0) purges.push({ siteId: site.id, purged });
  }
  return purges;
}
