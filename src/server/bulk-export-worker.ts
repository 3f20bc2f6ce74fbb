/**
 * Runs FHIR Bulk Data export jobs in every process that serves: each process polls for a job it
 * can claim (src/domain/bulk-export/export-jobs.ts: any site's, queued or with a lapsed lease) and
 * runs one job at a time, so jobs spread over every worker of every node and survive any of them
 * dying. The clean-up of expired exports runs here too, on one node at a time (advisory lock).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { BulkExportSettings } from '../config/bulk-export.ts';
import { cleanUpExports } from '../domain/bulk-export/export-cleanup.ts';
import { claimExport, failExport } from '../domain/bulk-export/export-jobs.ts';
import { runExport } from '../fhir/export/export-runner.ts';
import type { Database } from '../storage/database.ts';

const pollIntervalMs = 1_000;
const cleanupIntervalMs = 10 * 60 * 1000;
const firstCleanupAfterMs = 30_000;

export interface BulkExportWorker {
  /** Stops claiming; a running job is given back after its current batch, for any worker to restart. */
  stop(): Promise<void>;
}

export function startBulkExportWorker(database: Database, settings: BulkExportSettings, logger: Logger): BulkExportWorker {
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  let stopped = false;
  let running: Promise<void> | undefined;
  let cleaning: Promise<void> | undefined;

  const runNext = async () => {
    const job = await claimExport(database, owner, settings.leaseSeconds);
    if (!job) return false;
    logger.info({ job: job.id, site: job.siteId, attempt: job.attempts, types: job.resourceTypes }, 'bulk export started');
    try {
      const output = await runExport({ database, settings, owner, logger, stopping: () => stopped }, job);
      if (output) logger.info({ job: job.id, files: output.length, resources: output.reduce((sum, file) => sum + file.count, 0) }, 'bulk export completed');
      else logger.info({ job: job.id }, 'bulk export stopped: cancelled or taken over');
    } catch (error) {
      logger.error({ err: error, job: job.id }, 'bulk export failed');
      await failExport(database, job, owner, 'the export failed on the server; see the service log', settings.retentionHours).catch(() => {});
    }
    return true;
  };
  const poll = () => {
    if (stopped || running) return;
    running = (async () => {
      while (!stopped && (await runNext())) {
        // claim the next one straight away
      }
    })()
      .catch((error: unknown) => logger.warn({ err: error }, 'bulk export poll failed; it runs again shortly'))
      .finally(() => {
        running = undefined;
      });
  };
  const cleanUp = () => {
    cleaning ??= cleanUpExports(database.pool, settings.dir)
      .then((result) => {
        if (result.expired > 0 || result.orphanFolders > 0) logger.info(result, 'expired bulk exports deleted');
      })
      .catch((error: unknown) => logger.warn({ err: error }, 'bulk export clean-up failed; it runs again later'))
      .finally(() => {
        cleaning = undefined;
      });
  };
  const every = setInterval(poll, pollIntervalMs);
  const firstCleanup = setTimeout(cleanUp, firstCleanupAfterMs);
  const everyCleanup = setInterval(cleanUp, cleanupIntervalMs);
  for (const timer of [every, firstCleanup, everyCleanup]) timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(every);
      clearTimeout(firstCleanup);
      clearInterval(everyCleanup);
      await Promise.allSettled([running, cleaning]);
    },
  };
}
