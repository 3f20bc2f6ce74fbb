/**
 * Each serving process keeps a row of service_worker fresh (every 5 s), so that any process can
 * tell how many of each node's workers are up (src/platform/service-health.ts). The row is
 * removed at a clean stop; a missed heartbeat past 30 s marks the process as down.
 */
import type { Database } from '../storage/database.ts';
import { workerNumber } from './worker.ts';

const heartbeatEveryMs = 5_000;

export interface WorkerHeartbeat {
  stop(): Promise<void>;
}

export function startWorkerHeartbeat(database: Database, nodeId: string | undefined): WorkerHeartbeat {
  const node = nodeId ?? '';
  const worker = workerNumber() ?? 0;
  const beat = () =>
    database
      .query(
        `INSERT INTO service_worker (node_id, worker, pid) VALUES ($1, $2, $3)
         ON CONFLICT (node_id, worker) DO UPDATE SET pid = excluded.pid, heartbeat_at = now(),
           started_at = CASE WHEN service_worker.pid = excluded.pid THEN service_worker.started_at ELSE now() END`,
        [node, worker, process.pid],
      )
      .catch(() => undefined); // the database away: readiness says so; the next beat retries
  let beating: Promise<unknown> | undefined = beat().finally(() => (beating = undefined));
  const timer = setInterval(() => {
    beating ??= beat().finally(() => (beating = undefined));
  }, heartbeatEveryMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await beating;
      await database.query('DELETE FROM service_worker WHERE node_id = $1 AND worker = $2 AND pid = $3', [node, worker, process.pid]).catch(() => undefined);
    },
  };
}
