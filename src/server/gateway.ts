import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import { loadStructureDefinitions } from '../domain/records/validation.ts';
import { startDiskSpaceGuard, writtenFolders, type DiskSpaceGuard } from '../platform/disk-space/disk-space-guard.ts';
import { createOrigin } from '../platform/http/origin.ts';
import { processMetrics } from '../platform/metrics/gateway-metrics.ts';
import { TrafficCounter } from '../domain/activity/traffic-counter.ts';
import { startWorkerHeartbeat, type WorkerHeartbeat } from '../platform/worker-heartbeat.ts';
import type { Services } from '../platform/services.ts';
import { hl7v2Rerun } from '../hl7v2/intake/rerun.ts';
import { startBulkExportWorker, type BulkExportWorker } from './bulk-export-worker.ts';
import { startDataAccessRetention, type DataAccessRetention } from './data-access-retention.ts';
import type { ListeningSurface } from './listening-surface.ts';
import { prepareNode, recoverTemporaryFiles, withNodeIdentity, type PreparedNode } from './node-preparation.ts';
import { openDatabase, type OpenedDatabase } from './open-database.ts';
import { acquireServiceLock } from './service-lock.ts';
import { surfaceCatalogue, type RunningListener, type SurfaceCatalogue } from './surfaces.ts';

export type { ListeningSurface } from './listening-surface.ts';

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
  const identified = role.kind === 'single' ? withNodeIdentity(configured, logger, lock!) : configured;
  // Its own copy of the ports: the ones free-port starts get are written in below.
  const config: GatewayConfig = { ...identified, ports: { ...identified.ports } };
  let opened: OpenedDatabase | undefined;
  let node: PreparedNode | undefined;
  let retention: DataAccessRetention | undefined;
  let exports: BulkExportWorker | undefined;
  let traffic: TrafficCounter | undefined;
  let heartbeat: WorkerHeartbeat | undefined;
  let diskSpace: DiskSpaceGuard | undefined;
  const origins: FastifyInstance[] = [];
  const listeners: { name: string; listener: RunningListener }[] = [];
  const stopAll = async () => {
    await Promise.allSettled(listeners.map(({ listener }) => listener.close()));
    await Promise.allSettled(origins.map((origin) => origin.close()));
    await exports?.stop();
    await traffic?.stop();
    await heartbeat?.stop();
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
    const services: Services = { database: opened.database, config, logger, metrics: processMetrics(opened.database), messageRerun: hl7v2Rerun(opened.database, logger.child({ component: 'reprocess' })), traffic: (traffic = new TrafficCounter(opened.database, logger.child({ component: 'traffic-counts' })).start()), diskSpace };
    heartbeat = startWorkerHeartbeat(opened.database, config.nodeId);
    const listening: ListeningSurface[] = [];
    for (const { surface, port } of catalogue.http) {
      const configured = config.ports[port];
      if (configured === undefined) continue;
      const origin = await createOrigin(surface, services);
      origins.push(origin);
      await origin.listen({ host: config.bind, port: configured });
      const address = origin.server.address();
      const actual = typeof address === 'object' && address ? address.port : configured;
      // Origins that name each other to browsers (the admin app's viewer and the DICOMweb origin's
      // CORS) read the port actually listened on, also when 0 asked for a free one.
      config.ports[port] = actual;
      listening.push({ name: surface.name, protocol: config.tls ? 'https' : 'http', host: config.bind, port: actual });
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
