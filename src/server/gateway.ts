import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import { recoverNodeTemporaryFolders } from '../dicom/transfer-recovery.ts';
import { loadStructureDefinitions } from '../domain/records/validation.ts';
import { startDataLifecycleJob } from '../domain/retention/data-lifecycle-job.ts';
import { startDiskSpaceGuard, writtenFolders, type DiskSpaceGuard } from '../platform/disk-space/disk-space-guard.ts';
import { createOrigin } from '../platform/http/origin.ts';
import { processMetrics } from '../platform/metrics/gateway-metrics.ts';
import type { Services } from '../platform/services.ts';
import type { Database } from '../storage/database.ts';
import { migrate } from '../storage/migrations.ts';
import { startPlannerStatistics, type PlannerStatistics } from '../storage/planner-statistics.ts';
import { startBulkExportWorker, type BulkExportWorker } from './bulk-export-worker.ts';
import { startDataAccessRetention, type DataAccessRetention } from './data-access-retention.ts';
import { ensureInitialAdmin } from './first-run.ts';
import { identifyNode } from './node-identity.ts';
import { acquireNodeLease } from './node-lease.ts';
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

export interface PreparedNode {
  /** Stops the planner statistics and gives the node id's lease up. */
  stop(): Promise<void>;
}

/**
 * What runs once per node before any surface accepts: migrations, the node id's lease, the
 * first-run admin, planner statistics, the data lifecycle job. Each is safe against another node doing the same at the
 * same moment (advisory locks, idempotent SQL; docs/architecture/scale-out.md).
 */
export async function prepareNode(database: Database, config: GatewayConfig, logger: Logger, kind: OpenedDatabase['kind']): Promise<PreparedNode> {
  const report = await migrate(database);
  logger.info({ applied: report.applied, database: kind }, 'database ready');
  // Before anything touches the node's files in the shared storage (recovery comes after this).
  const lease = await acquireNodeLease(database, config.nodeId!, logger, () => process.kill(process.pid, 'SIGTERM'));
  try {
    await ensureInitialAdmin(database, config.dataDir, logger);
  } catch (error) {
    await lease.release();
    throw error;
  }
  const storageLogger = logger.child({ component: 'storage' });
  const statistics: PlannerStatistics = startPlannerStatistics(database, { log: (level, details, message) => storageLogger[level](details, message) });
  // Offboarded sites, message body retention, storage use: once per node here, once across nodes by its lock.
  const lifecycle = startDataLifecycleJob(database, logger.child({ component: 'data-lifecycle' }), { folders: { dicomStorageDir: config.dicomStorageDir, exportDir: config.bulkExport.dir } });
  return {
    async stop() {
      await lifecycle.stop();
      await statistics.stop();
      await lease.release();
    },
  };
}

/**
 * The node's id (CG_NODE_ID or the one kept in the data directory), logged at every start; the
 * data directory must be locked first, since the kept id lives there.
 */
export function withNodeIdentity(config: GatewayConfig, logger: Logger, lock: { release(): void }): GatewayConfig {
  let identity;
  try {
    identity = identifyNode(config);
  } catch (error) {
    lock.release();
    throw error;
  }
  logger.info({ node: identity.id, source: identity.source, dicomStorage: config.dicomStorageDir }, `node ${identity.id} (${identity.source === 'CG_NODE_ID' ? 'CG_NODE_ID' : `kept in ${identity.file}`}); DICOM storage in ${config.dicomStorageDir}`);
  return { ...config, nodeId: identity.id };
}

/** Start-up recovery of this node's DICOM temporary files, before any listener of the node stores. */
export async function recoverTemporaryFiles(services: Services): Promise<void> {
  if (services.config.ports.dicom === undefined) return;
  const removed = await recoverNodeTemporaryFolders(services, services.config.nodeId!);
  if (removed > 0) services.logger.warn({ surface: 'dicom', removed }, 'removed unfinished transfers left by a previous run');
}

/**
 * The composition root: storage first, then every enabled surface; stop() runs the same list
 * backwards (stop accepting, finish in-flight work, close the pool, stop the embedded database).
 */
export async function startGateway(
  configured: GatewayConfig,
  logger: Logger,
  catalogue: SurfaceCatalogue = surfaceCatalogue,
  role: GatewayRole = { kind: 'single' },
): Promise<RunningGateway> {
  const lock = role.kind === 'single' ? acquireServiceLock(configured.dataDir) : undefined;
  // A worker is told its node's id by its supervisor (CG_NODE_ID in its environment).
  const config = role.kind === 'single' ? withNodeIdentity(configured, logger, lock!) : configured;
  let opened: OpenedDatabase | undefined;
  let node: PreparedNode | undefined;
  let retention: DataAccessRetention | undefined;
  let exports: BulkExportWorker | undefined;
  let diskSpace: DiskSpaceGuard | undefined;
  const origins: FastifyInstance[] = [];
  const listeners: { name: string; listener: RunningListener }[] = [];
  const stopAll = async () => {
    await Promise.allSettled(listeners.map(({ listener }) => listener.close()));
    await Promise.allSettled(origins.map((origin) => origin.close()));
    await exports?.stop();
    await retention?.stop();
    diskSpace?.stop();
    await node?.stop();
    await opened?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database failed'));
    lock?.release();
  };
  try {
    opened = await openDatabase(config, logger, role.kind === 'worker' ? { maxConnections: role.maxConnections, searchConnections: role.searchConnections } : {});
    if (role.kind === 'single') {
      node = await prepareNode(opened.database, config, logger, opened.kind);
      await recoverTemporaryFiles({ database: opened.database, config, logger });
    }
    // In every process that serves: its purges are idempotent, and stopping it writes the data
    // access records this process still has queued.
    retention = startDataAccessRetention(opened.database, logger.child({ component: 'data-access-log' }));
    // The FHIR definitions take seconds to index and block the event loop while they do: do it
    // once before any listener accepts, not inside the first request or message.
    loadStructureDefinitions();
    diskSpace = await startDiskSpaceGuard({ folders: writtenFolders(config), settings: config.diskSpace, logger: logger.child({ component: 'disk-space' }) });
    const services: Services = { database: opened.database, config, logger, metrics: processMetrics(opened.database), diskSpace };
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
