/**
 * The service's health as the dashboard shows it: what /readyz answers (the database is
 * reachable), the nodes serving this database with the state of their lease (service_node,
 * heartbeat every 5 s, expired after 30 s), the serving processes up on each node (service_worker,
 * src/platform/worker-heartbeat.ts), the workers configured, and the
 * free space of the data and DICOM storage directories (fs.statfs, as `df` reports it for an
 * unprivileged user).
 */
import { statfs } from 'node:fs/promises';
import type { GatewayConfig } from '../config/env.ts';
import type { Database } from '../storage/database.ts';
import { workerNumber } from './worker.ts';

/** As src/server/node-lease.ts: a lease whose heartbeat is older than this belongs to a node that is gone. */
const leaseExpiresAfterSeconds = 30;

export interface NodeHealth {
  nodeId: string;
  /** live: heartbeat within the lease; expired: the node stopped without releasing its id. */
  lease: 'live' | 'expired';
  startedAt: string;
  heartbeatAt: string;
  /** Serving processes of the node whose heartbeat is fresh (service_worker). */
  workersUp: number;
}

export interface DiskHealth {
  /** data or dicom-storage */
  name: string;
  freeBytes: number;
  totalBytes: number;
}

export interface ServiceHealth {
  ready: boolean;
  answeringNode: string | null;
  /** The worker that answered and the number configured (CG_WORKERS); a dead worker is restarted by its node's supervisor. */
  worker: number | null;
  workers: number;
  nodes: NodeHealth[];
  disks: DiskHealth[];
}

export async function serviceHealth(database: Database, config: Pick<GatewayConfig, 'nodeId' | 'workers' | 'dataDir' | 'dicomStorageDir'>): Promise<ServiceHealth> {
  const ready = await database.isReachable();
  const nodes = ready ? await leases(database).catch(() => []) : [];
  const disks = await Promise.all(
    [['data', config.dataDir], ['dicom-storage', config.dicomStorageDir]].map(async ([name, path]) => {
      const stats = await statfs(path!).catch(() => undefined);
      return stats ? { name: name!, freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize } : undefined;
    }),
  );
  return {
    ready,
    answeringNode: config.nodeId ?? null,
    worker: workerNumber() ?? null,
    workers: config.workers,
    nodes,
    disks: disks.filter((disk) => disk !== undefined),
  };
}

async function leases(database: Database): Promise<NodeHealth[]> {
  const { rows } = await database.query<{ node_id: string; started_at: Date; heartbeat_at: Date; live: boolean; workers_up: number }>(
    `SELECT n.node_id, n.started_at, n.heartbeat_at, n.heartbeat_at >= now() - make_interval(secs => $1) AS live,
            (SELECT count(*)::int FROM service_worker w WHERE w.node_id = n.node_id AND w.heartbeat_at >= now() - make_interval(secs => $1)) AS workers_up
       FROM service_node n ORDER BY n.node_id LIMIT 100`,
    [leaseExpiresAfterSeconds],
  );
  return rows.map((row) => ({
    nodeId: row.node_id,
    lease: row.live ? 'live' : 'expired',
    startedAt: row.started_at.toISOString(),
    heartbeatAt: row.heartbeat_at.toISOString(),
    workersUp: row.workers_up,
  }));
}
