/**
 * Raw message bodies past their site's retention (site.message_body_retention_days) are removed
 * from the message log: the entry, its outcome, problems and acknowledgement stay, the body
 * becomes NULL and body_purged_at says when. In small batches, each its own short transaction,
 * with a pause between them (at least 100 ms, and at least four times the batch's own duration),
 * so that intake writing the same table never waits long on it and keeps most of the machine.
 */
import type { Database } from '../../storage/database.ts';

export interface PurgeOptions {
  /** Entries per transaction. */
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

const purgeBatchSql = `
  WITH doomed AS (
    SELECT site_id, id FROM inbound_message
     WHERE site_id = $1 AND body_purged_at IS NULL AND received_at < $2
     ORDER BY seq
     LIMIT $3
       FOR UPDATE SKIP LOCKED)
  UPDATE inbound_message m SET raw = NULL, body_purged_at = now()
    FROM doomed
   WHERE m.site_id = doomed.site_id AND m.id = doomed.id`;

export async function purgeMessageBodies(database: Database, options: PurgeOptions = {}): Promise<SitePurge[]> {
  const batchSize = options.batchSize ?? defaultPurgeBatchSize;
  const pauseMs = options.pauseMs ?? defaultPurgePauseMs;
  const restFactor = options.restFactor ?? defaultPurgeRestFactor;
  const now = options.now ?? new Date();
  const { rows: sites } = await database.query<{ id: string; days: number }>(
    `SELECT id, message_body_retention_days AS days FROM site
      WHERE message_body_retention_days IS NOT NULL AND ($1::uuid IS NULL OR id = $1) ORDER BY id`,
    [options.siteId ?? null],
  );
  const purges: SitePurge[] = [];
  for (const site of sites) {
    const cutoff = new Date(now.getTime() - site.days * 86_400_000);
    let purged = 0;
    for (;;) {
      if (options.stopped?.()) break;
      const started = performance.now();
      const { rowCount } = await database.query(purgeBatchSql, [site.id, cutoff, batchSize]);
      purged += rowCount ?? 0;
      if ((rowCount ?? 0) < batchSize) break;
      const pause = Math.max(pauseMs, (performance.now() - started) * restFactor);
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
    }
    if (purged > 0) purges.push({ siteId: site.id, purged });
  }
  return purges;
}
