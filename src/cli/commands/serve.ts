import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { loadConfig } from '../../config/env.ts';
import { answerClusterScrapes } from '../../platform/metrics/cluster-scrape.ts';
import type { ListeningSurface } from '../../server/listening-surface.ts';
import { createLogger } from '../../server/logger.ts';
import { startSupervisor, workerPoolSize, workerSearchPoolSize, type WorkerListeningMessage } from '../../server/supervisor.ts';
import type { CommandContext } from '../command.ts';

const shutdownDeadlineMs = 10_000;

/**
 * One process serving everything (CG_WORKERS=1), or a supervisor and CG_WORKERS workers: the
 * workers run this same command and are told apart by the cluster module.
 */
export async function serveCommand({ json }: CommandContext): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // The supervisor of several workers serves nothing itself: only the processes that do load the
  // surfaces (about 80 MB of modules a process; docs/performance.md).
  if (cluster.isWorker) {
    const { startGateway } = await import('../../server/gateway.ts');
    const gateway = await startGateway(config, logger, undefined, {
      kind: 'worker',
      maxConnections: workerPoolSize(config.workers),
      searchConnections: workerSearchPoolSize(config.limits.search.connections, config.workers),
    });
    const message: WorkerListeningMessage = { kind: 'listening', listening: gateway.listening };
    process.send?.(message);
    logger.info({ pid: process.pid }, 'worker serving');
    stopOnSignals(logger, gateway.stop);
    return;
  }
  // The workers' metrics are scraped through the supervisor (src/platform/metrics/cluster-scrape.ts).
  if (config.workers > 1) answerClusterScrapes();
  const service = config.workers > 1 ? await startSupervisor(config, logger) : await (await import('../../server/gateway.ts')).startGateway(config, logger);
  announce(service.listening, logger, json ? undefined : config.dataDir);
  stopOnSignals(logger, service.stop, 'killWorkers' in service ? service.killWorkers : undefined);
}

function announce(listening: ListeningSurface[], logger: Logger, dataDirForBanner: string | undefined): void {
  for (const surface of listening) {
    logger.info({ surface: surface.name, protocol: surface.protocol, host: surface.host, port: surface.port }, `${surface.name} listening on ${surface.protocol}://${surface.host}:${surface.port}`);
  }
  if (dataDirForBanner !== undefined) {
    process.stderr.write(`Clinical Gateway is running (data in ${dataDirForBanner}):\n${listening.map((s) => `  ${s.name.padEnd(13)} ${s.protocol}://${s.host}:${s.port}`).join('\n')}\n`);
  }
}

/** SIGTERM and SIGINT: stop accepting, finish in-flight work, exit; all within 10 s. */
function stopOnSignals(logger: Logger, stop: () => Promise<void>, onDeadline?: () => void): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight work');
    const deadline = setTimeout(() => {
      logger.error('shutdown did not finish within 10 s; exiting');
      onDeadline?.();
      process.exit(1);
    }, shutdownDeadlineMs);
    deadline.unref();
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
