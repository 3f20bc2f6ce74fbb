/**
 * The DICOM listener (issue 5 points 1-2): a C-ECHO, C-STORE and MPPS (N-CREATE / N-SET) SCP on
 * its own TCP port. The called AE title of each association selects the site.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { isIndexedPath } from '../domain/imaging/indexed-path.ts';
import { whileStoredPathLocked } from '../domain/imaging/stored-path-lock.ts';
import type { Services } from '../platform/services.ts';
import { unmapIpv4 } from '../domain/clients/ip-allow-list.ts';
import { FairConnectionSlots } from '../platform/fair-connection-slots.ts';
import { AssociationLimits } from './association/association-limits.ts';
import { DicomConnection, type ConnectionSettings } from './association/connection.ts';
import { StorageLayout } from '../storage/dicom/layout.ts';
import { storeLimits } from '../storage/dicom/store-limits.ts';
import { workerTemporaryFolder } from '../storage/dicom/temporary-folders.ts';
import { acceptProxyProtocol, TrustedProxies } from '../platform/proxy/proxied-connections.ts';
import { workerNumber } from '../platform/worker.ts';

export interface DicomListenerOptions {
  host: string;
  port: number;
  /** Overrides of the defaults below (tests use short timeouts). */
  maxPduLength?: number;
  artimTimeoutMs?: number;
  idleTimeoutMs?: number;
  maxAssociations?: number;
  maxAssociationsPerAddress?: number;
  /** TCP connections per remote address, before association or after; default from the config. */
  maxConnectionsPerAddress?: number;
  /** Overrides of CG_DICOM_MAX_INSTANCE_SIZE and CG_DICOM_MIN_FREE_DISK, in bytes. */
  maxInstanceBytes?: number;
  minFreeDiskBytes?: number;
  /** How long close() waits for in-flight messages before cutting connections. */
  closeGraceMs?: number;
  /** This process's own folder of temporary files; default: its node's and worker's (temporary-folders.ts). */
  temporaryFolder?: string;
}

export interface DicomListener {
  port: number;
  close(): Promise<void>;
}

export const dicomListenerDefaults = {
  // 256 KiB PDUs: large enough that PDU overhead is negligible, small enough to bound memory.
  maxPduLength: 256 * 1024,
  artimTimeoutMs: 30_000,
  idleTimeoutMs: 120_000,
  maxAssociations: 64,
  maxAssociationsPerAddress: 16,
  closeGraceMs: 60_000,
} as const;

export async function startDicomListener(services: Services, options: DicomListenerOptions): Promise<DicomListener> {
  const settings: ConnectionSettings = {
    maxPduLength: options.maxPduLength ?? dicomListenerDefaults.maxPduLength,
    artimTimeoutMs: options.artimTimeoutMs ?? dicomListenerDefaults.artimTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs ?? dicomListenerDefaults.idleTimeoutMs,
  };
  const logger = services.logger.child({ surface: 'dicom' });
  const layout = new StorageLayout(services.config.dicomStorageDir, options.temporaryFolder ?? processTemporaryFolder(services.config));
  const removed = await layout.prepare((relativePath) => isIndexedPath(services.database, relativePath), (relativePath, work) => whileStoredPathLocked(services.database, relativePath, work));
  if (removed > 0) logger.warn({ removed }, 'removed unfinished transfers left by a previous run');
  const limits = new AssociationLimits(
    options.maxAssociations ?? dicomListenerDefaults.maxAssociations,
    options.maxAssociationsPerAddress ?? dicomListenerDefaults.maxAssociationsPerAddress,
  );
  const connections = new Map<DicomConnection, Promise<void>>();
  const configured = services.config.limits.dicom;
  const stores = storeLimits(
    services.config.dicomStorageDir,
    options.maxInstanceBytes ?? configured.maxInstanceBytes,
    options.minFreeDiskBytes ?? configured.minFreeDiskBytes,
    () => services.diskSpace?.shortage() !== undefined,
  );
  // Counted from accept, before any PDU: idle sockets from one address cannot fill the listener
  // for every site (issue 26 point 3). Over a cap, the oldest connection not yet associated, of
  // the newcomer's address (at its cap) or of the address holding the most (listener full), makes
  // room for the newcomer; with none, the newcomer is closed at once.
  const maxTotalConnections = limits.maxTotal * 2;
  const slots = new FairConnectionSlots<DicomConnection>(
    maxTotalConnections,
    options.maxConnectionsPerAddress ?? services.config.limits.dicom.maxConnectionsPerAddress,
    (connection) => !connection.associated,
  );

  // allowHalfOpen: a peer that sends a truncated PDU and closes its side still gets its A-ABORT.
  const server: Server = createServer({ allowHalfOpen: true, noDelay: true }, (socket: Socket) => {
    const remote = unmapIpv4(socket.remoteAddress ?? 'unknown');
    const connection = new DicomConnection(socket, { settings, database: services.database, logger, layout, limits, storeLimits: stores, ...(services.metrics ? { metrics: services.metrics } : {}), ...(services.traffic ? { traffic: services.traffic } : {}) });
    const slot = slots.admit(remote, connection);
    if (!slot.admitted) {
      logger.warn({ remoteAddress: remote, perAddress: slots.maxPerAddress, total: slots.maxTotal, reason: slot.reason }, 'DICOM connection refused: connection limit reached');
      socket.destroy();
      return;
    }
    if (slot.evicted) {
      logger.warn('DICOM connection without an association closed: its slot was needed by a new connection');
      slot.evicted.destroy();
    }
    socket.once('close', () => slots.release(remote, connection));
    const running = connection.run().catch((error: unknown) => logger.error({ err: error }, 'DICOM connection failed'));
    connections.set(connection, running);
    void running.finally(() => connections.delete(connection));
  });
  // A backstop only: the slots above decide, and they must see a newcomer to make room for it.
  server.maxConnections = maxTotalConnections * 2;
  // Behind a load balancer the per-address caps and the logs must see the modality's address.
  acceptProxyProtocol(server, new TrustedProxies(services.config.trustedProxies), logger);
  server.on('error', (error) => logger.error({ err: error }, 'DICOM listener error'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  logger.info({ host: options.host, port }, 'DICOM listener started');

  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const connection of connections.keys()) connection.shutdown();
        const grace = options.closeGraceMs ?? dicomListenerDefaults.closeGraceMs;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(connections.values()),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, grace);
          }),
        ]);
        clearTimeout(timer);
        // Past the grace period, whatever is still open is cut (its temporary file is removed).
        for (const connection of connections.keys()) connection.destroy();
        await Promise.all(connections.values());
        await stopped;
        await layout.close();
        logger.info('DICOM listener stopped');
      })();
      return closing;
    },
  };
}

/**
 * This process's temporary folder: its node's (CG_NODE_ID; the CLI and tests without one use
 * "local") and its worker's (a single-process service is worker 1).
 */
export function processTemporaryFolder(config: Services['config']): string {
  return workerTemporaryFolder(config.dicomStorageDir, config.nodeId ?? 'local', workerNumber() ?? 1);
}
