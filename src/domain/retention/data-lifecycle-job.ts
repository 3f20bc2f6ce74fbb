/**
 * The data lifecycle's background work: sites whose offboarding grace period has passed are
 * purged (site-offboarding.ts), message bodies and refused-traffic records past each site's
 * retention are purged (message-body-purge.ts, refused-traffic-purge.ts), then every site's
 * storage use is computed again (storage-usage.ts).
 * A minute after start and then every hour; by one process of all nodes at a time (an advisory
 * lock held for the run: another node finding it taken skips its turn, the work being periodic).
 */
import type { Logger } from 'pino';
import type { Database } from '../../storage/database.ts';
import { onceAcrossNodes, runIfNoOtherNodeIs } from '../../storage/once-across-nodes.ts';
import { purgeMessageBodies } from './message-body-purge.ts';
import type { PurgeOptions, SitePurge } from './paced-batches.ts';
import { purgeRefusedTraffic } from './refused-traffic-purge.ts';
import { purgeSite, sitesDueForPurge, type SiteFolders, type SitePurgeReport } from './site-offboarding.ts';
import { refreshStorageUsage } from './storage-usage.ts';

type RunOptions = Pick<PurgeOptions, 'batchSize' | 'pauseMs' | 'restFactor' | 'stopped'> & {
  /** Where the sites' files are; without it, no site is purged (only records past their retention). */
  folders?: SiteFolders;
};

export interface DataLifecycleJobOptions extends Omit<RunOptions, 'stopped'> {
  firstRunAfterMs?: number;
  intervalMs?: number;
}

export interface DataLifecycleJob {
  /** Stops the timers; a run in progress stops after its current batch. */
  stop(): Promise<void>;
}

export interface DataLifecycleRun {
  sitesPurged: SitePurgeReport[];
  purged: SitePurge[];
  refusalsPurged: SitePurge[];
  usageRows: number;
}

/** One run, unless another process of any node is running one (then undefined). */
export function runDataLifecycleOnce(database: Database, options: RunOptions = {}): Promise<DataLifecycleRun | undefined> {
  return runIfNoOtherNodeIs(database, onceAcrossNodes.dataLifecycle, async () => {
    const sitesPurged: SitePurgeReport[] = [];
    for (const siteId of options.folders ? await sitesDueForPurge(database) : []) {
      if (options.stopped?.()) break;
      sitesPurged.push(await purgeSite(database, siteId, options.folders!, { kind: 'operator' }, { by: 'the data lifecycle job' }));
    }
    const purged = await purgeMessageBodies(database, options);
    const refusalsPurged = await purgeRefusedTraffic(database, options);
    const usageRows = options.stopped?.() ? 0 : await refreshStorageUsage(database);
    return { sitesPurged, purged, refusalsPurged, usageRows };
  });
}

export function startDataLifecycleJob(database: Database, logger: Logger, options: DataLifecycleJobOptions = {}): DataLifecycleJob {
  let stopping = false;
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= runDataLifecycleOnce(database, { ...options, stopped: () => stopping })
      .then((result) => {
        for (const { siteId, name, deleted } of result?.sitesPurged ?? []) logger.warn({ site: siteId, name, deleted }, 'site purged: its offboarding grace period had passed');
        for (const { siteId, purged } of result?.purged ?? []) logger.info({ site: siteId, purged }, 'message bodies past the site\'s retention purged');
        for (const { siteId, purged } of result?.refusalsPurged ?? []) logger.info({ site: siteId, purged }, 'refused-traffic records past the site\'s retention purged');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'data lifecycle run failed; it runs again later'))
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(run, options.firstRunAfterMs ?? 60_000);
  const every = setInterval(run, options.intervalMs ?? 60 * 60 * 1000);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopping = true;
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}
