/**
 * Refused-traffic records past their site's retention (site.refused_traffic_retention_days) are
 * deleted, oldest first, in paced batches (paced-batches.ts). Records of sites without a setting,
 * and records of no site, keep the recorder's service default (refused-traffic/recorder.ts),
 * which its writer enforces as it writes.
 */
import type { Database } from '../../storage/database.ts';
import { purgeEachSitePastRetention, type PurgeOptions, type SitePurge } from './paced-batches.ts';

const purgeBatchSql = `
  DELETE FROM refused_traffic WHERE id IN (
    SELECT id FROM refused_traffic
     WHERE site_id = $1 AND occurred_at < $2
     ORDER BY occurred_at
     LIMIT $3
       FOR UPDATE SKIP LOCKED)`;

export function purgeRefusedTraffic(database: Database, options: PurgeOptions = {}): Promise<SitePurge[]> {
  return purgeEachSitePastRetention(database, options, 'refused_traffic_retention_days', purgeBatchSql);
}
