import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import { loadStructureDefinitions } from '../domain/records/validation.ts';
import { createOrigin } from '../platform/http/origin.ts';
import type { Services } from '../platform/services.ts';
import type { Database } from '../storage/database.ts';
import { migrate } from '../storage/migrations.ts';
import { startPlannerStatistics, type PlannerStatistics } from '../storage/planner-statistics.ts';
import { startBulkExportWorker, type BulkExportWorker } from './bulk-export-worker.ts';
import { startDataAccessRetention, type DataAccessRetention } from './data-access-retention.ts';
import { ensureInitialAdmin } from './first-run.ts';
import { openDatabase, type OpenedDatabase } from './open-database.ts';
import { acquireServiceLock } from './service-lock.ts';
import { surfaceCatalogue, type RunningListener, type SurfaceCatalogue } from './surfaces.ts';

export interface ListeningSurface {
  name: string;
  protocol: 'http' | 'https' | 'mllp' | 'dicom';
  host: string;
  port: number;
}

export interface RunningGateway {
  services: Services;
  listening: ListeningSurface[];
  stop(): Promise<void>;
}

/**
 * How this process takes part: the whole service ('single'), or one worker of several whose
 * supervisor holds the data directory, has migrated the database and runs the once-per-node
 * jobs (src/server/supervisor.ts), with a share of the connection pool.
 */
export type GatewayRole = { kind: 'single' } | { kind: 'worker'; maxConnections: number; searchConnections: number };

/**
 * What runs once per node before any surface accepts: migrations, the first-run admin, planner
 * statistics. Each is safe against another node doing the same (advisory locks, idempotent SQL).
 */
export async function prepareNode(database: Database, config: GatewayConfig, logger: Logger, kind: OpenedDatabase['kind']): Promise<PlannerStatistics> {
  const report = await migrate(database);
  logger.info({ applied: report.applied, database: kind }, 'database ready');
  await ensureInitialAdmin(database, config.dataDir, logger);
  const storageLogger = logger.child({ component: 'storage' });
  return startPlannerStatistics(database, { log: (level, details, message) => storageLogger[level](details, message) });
}

/**
 * The composition root: storage first, then every enabled surface; stop() runs the same list
 * backwards (stop accepting, finish in-flight work, close the pool, stop the embedded database).
 */
export async function startGateway(
  config: GatewayConfig,
  logger: Logger,
  catalogue: SurfaceCatalogue = surfaceCatalogue,
  role: GatewayRole = { kind: 'single' },
): Promise<RunningGateway> {
  const lock = role.kind === 'single' ? acquireServiceLock(config.dataDir) : undefined;
  let opened: OpenedDatabase | undefined;
  let statistics: PlannerStatistics | undefined;
  let retention: DataAccessRetention | undefined;
  let exports: BulkExportWorker | undefined;
  const origins: FastifyInstance[] = [];
  const listeners: { name: string; listener: RunningListener }[] = [];
  const stopAll = async () => {
    await Promise.allSettled(listeners.map(({ listener }) => listener.close()));
    await Promise.allSettled(origins.map((origin) => origin.close()));
    await exports?.stop();
    await statistics?.stop();
    await retention?.stop();
    await opened?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database failed'));
    lock?.release();
  };
  try {
    opened = await openDatabase(config, logger, role.kind === 'worker' ? { maxConnections: role.maxConnections, searchConnections: role.searchConnections } : {});
    if (role.kind === 'single') statistics = await prepareNode(opened.database, config, logger, opened.kind);
    // In every process that serves: its purges are idempotent, and stopping it writes the data
    // access records this process still has queued.
    retention = startDataAccessRetention(opened.database, logger.child({ component: 'data-access-log' }));
    // The FHIR definitions take seconds to index and block the event loop while they do: do it
    // once before any listener accepts, not inside the first request or message.
    loadStructureDefinitions();
    const services: Services = { database: opened.database, config, logger };
    const listening: ListeningSurface[] = [];
    for (const { surface, port } of catalogue.http) {
      const configured = config.ports[port];
      if (configured === undefined) continue;
      const origin = await createOrigin(surface, services);
      origins.push(origin);
      await origin.listen({ host: config.bind, port: configured });
      const address = origin.server.address();
      listening.push({ name: surface.name, protocol: config.tls ? 'https' : 'http', host: config.bind, port: typeof address === 'object' && address ? address.port : configured });
    }
    for (const { surface, port } of catalogue.tcp) {
      const configured = config.ports[port];
      if (configured === undefined) continue;
      const listener = await surface.start(services, { host: config.bind, port: configured });
      listeners.push({ name: surface.name, listener });
      listening.push({ name: surface.name, protocol: surface.name, host: config.bind, port: listener.port });
    }
    // In every process that serves, once it accepts: any of them may run any site's export job.
    exports = startBulkExportWorker(opened.database, config.bulkExport, logger.child({ component: 'bulk-export' }));
    return { services, listening, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
