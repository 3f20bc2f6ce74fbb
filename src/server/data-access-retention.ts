/**
 * Keeps the data access log within each site's retention (site.data_access_retention_days): a
 * purge shortly after start and then every six hours, in every process (a purge is idempotent;
 * concurrent ones delete disjoint or already deleted rows). `audit purge` runs one on demand.
 */
import type { Logger } from 'pino';
import { dataAccessRecorder } from '../domain/audit/data-access.ts';
import { purgeDataAccess } from '../domain/audit/data-access-log.ts';
import type { Database } from '../storage/database.ts';

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
    running ??= purgeDataAccess(database)
      .then((purged) => {
        if (purged.length > 0) logger.info({ purged }, 'data access records past their retention deleted');
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
