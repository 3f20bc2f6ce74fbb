/**
 * Raw message bodies past their site's retention (site.message_body_retention_days) are removed
 * from the message log: the entry, its outcome, problems and acknowledgement stay, the body
 * becomes NULL and body_purged_at says when. In paced batches (paced-batches.ts).
 */
import type { Database } from '../../storage/database.ts';
import { purgeEachSitePastRetention, type PurgeOptions, type SitePurge } from './paced-batches.ts';

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

export function purgeMessageBodies(database: Database, options: PurgeOptions = {}): Promise<SitePurge[]> {
  return purgeEachSitePastRetention(database, options, 'message_body_retention_days', purgeBatchSql);
}
