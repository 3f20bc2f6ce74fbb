/**
 * Keeps the data access log within each site's retention (site.data_access_retention_days): a
 * purge shortly after start and then every six hours, by one process of all nodes at a time (an
 * advisory lock: a process finding another purging skips its turn; a purge is idempotent, so an
 * `audit purge` run on demand alongside is harmless too).
 */
import type { Logger } from 'pino';
import { dataAccessRecorder } from '../domain/audit/data-access.ts';
import { purgeDataAccess } from '../domain/audit/data-access-log.ts';
import type { Database } from '../storage/database.ts';
import { onceAcrossNodes, runIfNoOtherNodeIs } from '../storage/once-across-nodes.ts';

const firstPurgeAfterMs = 60_000;
const purgeIntervalMs = 6 * 60 * 60 * 1000;
/** At shutdown, records still queued get this long to be written (then they are logged). */
const flushTimeoutMs = 5_000;

export interface DataAccessRetention {
  /** Stops the purges and waits (bounded) for queued records to be written. */
  stop(): Promise<void>;
}

export function startDataAccessRetention(database: Database, logger: Logger): DataAccessRetention {
  let running: Promise<void> | undefined;
  const purge = () => {
    running ??= runIfNoOtherNodeIs(database, onceAcrossNodes.dataAccessRetention, () => purgeDataAccess(database))
      .then((purged) => {
        if (purged && purged.length > 0) logger.info({ purged }, 'data access records past their retention deleted');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'data access retention purge failed; it runs again later'))
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(purge, firstPurgeAfterMs);
  const every = setInterval(purge, purgeIntervalMs);
  first.unref();
  every.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(every);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, flushTimeoutMs);
      });
      await Promise.race([Promise.all([running, dataAccessRecorder(database).settled()]), timeout]);
      clearTimeout(timer);
    },
  };
}
