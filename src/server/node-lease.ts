import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Database } from '../storage/database.ts';
import { isProcessAlive } from '../storage/process-liveness.ts';

export class NodeIdInUseError extends Error {
  override readonly name = 'NodeIdInUseError';
}

/** A lease whose heartbeat is older than this belongs to a node that is gone. */
export const leaseExpiresAfterSeconds = 30;
const heartbeatEveryMs = 5_000;

export interface NodeLease {
  /** Stops the heartbeat and gives the lease up. */
  release(): Promise<void>;
}

/**
 * Takes the lease of a node id in the database (service_node), so that two running nodes never
 * share one id: each recovers its id's temporary files in the shared storage at start, and would
 * remove the other's transfers in flight. A lease is taken over when its heartbeat is older than
 * leaseExpiresAfterSeconds, or at once when it was held on this host by a process that no longer
 * exists (a node restarted after a crash). A heartbeat that finds its lease taken (this process
 * stalled past the expiry and another took the id) calls `lost`: the node must stop.
 */
export async function acquireNodeLease(database: Database, nodeId: string, logger: Logger, lost: () => void): Promise<NodeLease> {
  const holder = randomUUID();
  const host = hostname();
  for (let attempt = 0; ; attempt++) {
    const { rows } = await database.query<{ holder: string }>(
      `INSERT INTO service_node (node_id, holder, host, pid) VALUES ($1, $2, $3, $4)
       ON CONFLICT (node_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid, started_at = now(), heartbeat_at = now()
        WHERE service_node.heartbeat_at < now() - make_interval(secs => $5)
       RETURNING holder`,
      [nodeId, holder, host, process.pid, leaseExpiresAfterSeconds],
    );
    if (rows[0]?.holder === holder) break;
    const current = (await database.query<{ host: string; pid: number; heartbeat_at: Date }>('SELECT host, pid, heartbeat_at FROM service_node WHERE node_id = $1', [nodeId])).rows[0];
    if (current && attempt === 0 && current.host === host && current.pid !== process.pid && !isProcessAlive(current.pid)) {
      // Left by a process of this host that died: free it, and take it on the next attempt.
      await database.query('DELETE FROM service_node WHERE node_id = $1 AND host = $2 AND pid = $3', [nodeId, current.host, current.pid]);
      continue;
    }
    if (current === undefined && attempt < 3) continue; // released meanwhile
    throw new NodeIdInUseError(
      `node id ${nodeId} is in use by a running node (host ${current?.host ?? '?'}, pid ${current?.pid ?? '?'}, last heartbeat ${current?.heartbeat_at.toISOString() ?? '?'}): ` +
        `every node sharing this database and DICOM storage needs its own CG_NODE_ID (or its own CG_DATA_DIR, where a generated id is kept). ` +
        `A node that stopped without releasing its id frees it ${leaseExpiresAfterSeconds} s after its last heartbeat.`,
    );
  }
  let stopped = false;
  let beating: Promise<unknown> | undefined;
  const heartbeat = setInterval(() => {
    beating ??= database
      .query('UPDATE service_node SET heartbeat_at = now() WHERE node_id = $1 AND holder = $2', [nodeId, holder])
      .then(({ rowCount }) => {
        if (rowCount === 0 && !stopped) {
          stopped = true;
          clearInterval(heartbeat);
          logger.fatal({ node: nodeId }, `the lease of node id ${nodeId} was taken by another node (this one missed its heartbeats for ${leaseExpiresAfterSeconds} s); stopping`);
          lost();
        }
      })
      .catch((error: unknown) => logger.warn({ err: error, node: nodeId }, 'node lease heartbeat failed; retrying'))
      .finally(() => {
        beating = undefined;
      });
  }, heartbeatEveryMs);
  heartbeat.unref();
  return {
    async release() {
      stopped = true;
      clearInterval(heartbeat);
      await beating;
      await database.query('DELETE FROM service_node WHERE node_id = $1 AND holder = $2', [nodeId, holder]).catch(() => {});
    },
  };
}
