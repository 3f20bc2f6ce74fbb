import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { missingMallocSettings } from '../cli/service-runtime.ts';
import type { GatewayConfig } from '../config/env.ts';
import type { ListeningSurface } from './listening-surface.ts';
import { prepareNode, recoverTemporaryFiles, withNodeIdentity, type PreparedNode } from './node-preparation.ts';
import { openDatabase, type OpenedDatabase } from './open-database.ts';
import { acquireServiceLock } from './service-lock.ts';

/**
 * The PostgreSQL connections one service process used before it had workers; the workers of a
 * node share about as many, so that adding workers does not multiply the load on the database,
 * yet each keeps enough for its own concurrent transactions.
 */
const nodeConnectionBudget = 20;
const minimumWorkerConnections = 4;
/** The supervisor's own: migrations, the node lease, the first-run admin, DICOM recovery, planner statistics. */
const supervisorConnections = 3;

export function workerPoolSize(workers: number): number {
  return Math.max(minimumWorkerConnections, Math.ceil(nodeConnectionBudget / workers));
}

/** The searches' own pool (CG_SEARCH_DB_CONNECTIONS per node) is shared out the same way, at least 2 each. */
export function workerSearchPoolSize(nodeSearchConnections: number, workers: number): number {
  return Math.max(2, Math.ceil(nodeSearchConnections / workers));
}

/**
 * Node options a worker adds to the service's own (src/cli/service-runtime.ts; the last of two
 * values wins). A worker of two takes about half the node's requests, so it allocates about half
 * as fast as a single process: a 4 MB semi-space is collected about as often as the single
 * process's 8 MB, and the young generation of each worker (up to three semi-spaces resident)
 * no longer counts twice what one process needed. In back-to-back quick FHIR runs with two
 * workers (load 16-18), the group's peak went from 389-440 to 334-380 MB summed
 * (docs/performance.md).
 */
export const workerNodeOptions: readonly string[] = ['--max-semi-space-size=4'];

/** What a worker tells its supervisor once every surface of it listens. */
export interface WorkerListeningMessage {
  kind: 'listening';
  listening: ListeningSurface[];
}

function isListeningMessage(message: unknown): message is WorkerListeningMessage {
  return typeof message === 'object' && message !== null && (message as { kind?: unknown }).kind === 'listening';
}

export interface RunningSupervisor {
  listening: ListeningSurface[];
  /** Drains every worker (SIGTERM), then closes the database and releases the data directory. */
  stop(): Promise<void>;
  /** SIGKILLs the workers still running (the shutdown deadline passed). */
  killWorkers(): void;
}

// A worker that dies this soon after it started is failing at start-up: restart it with growing
// pauses instead of in a tight loop.
const settledAfterMs = 10_000;
const firstRestartPauseMs = 500;
const longestRestartPauseMs = 30_000;

/**
 * The supervising process of a node with several workers (Node's cluster module: the listening
 * sockets are the supervisor's, and it hands each new connection to a worker in turn, so every
 * worker serves every surface on the same ports). It owns what exists once per node: the data
 * directory lock, the embedded PostgreSQL, migrations and the first-run admin, recovery of every
 * DICOM temporary folder before any worker starts, and planner statistics. A worker that dies is
 * logged and replaced under the same worker number; the others keep serving meanwhile.
 */
export async function startSupervisor(configured: GatewayConfig, logger: Logger): Promise<RunningSupervisor> {
  const lock = acquireServiceLock(configured.dataDir);
  const config = withNodeIdentity(configured, logger, lock);
  let opened: OpenedDatabase | undefined;
  let node: PreparedNode | undefined;
  const workers = new Map<number, Worker>();
  const restarts = new Map<number, { timer?: NodeJS.Timeout; pauseMs: number }>();
  let stopping = false;
  const release = async () => {
    await node?.stop();
    await opened?.close().catch((error: unknown) => logger.error({ err: error }, 'closing the database failed'));
    lock.release();
  };
  const drain = async () => {
    stopping = true;
    for (const restart of restarts.values()) clearTimeout(restart.timer);
    const exited = [...workers.values()].map((worker) => new Promise<void>((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve()))));
    for (const worker of workers.values()) if (!worker.isDead()) worker.process.kill('SIGTERM');
    await Promise.all(exited);
  };
  try {
    opened = await openDatabase(config, logger, { maxConnections: supervisorConnections });
    node = await prepareNode(opened.database, config, logger, opened.kind);
    await recoverTemporaryFiles({ database: opened.database, config, logger });
    // A supervisor started without the launcher's malloc settings still gives them to its workers.
    const env = { ...missingMallocSettings(process.env), CG_DATABASE_URL: opened.connectionString, CG_NODE_ID: config.nodeId! };

    cluster.setupPrimary({ execArgv: [...process.execArgv, ...workerNodeOptions] });
    const fork = (number: number): Promise<ListeningSurface[]> => {
      const worker = cluster.fork({ ...env, CG_WORKER_NUMBER: String(number) });
      const startedAt = Date.now();
      workers.set(number, worker);
      const listening = new Promise<ListeningSurface[]>((resolve, reject) => {
        worker.on('message', (message: unknown) => {
          if (isListeningMessage(message)) resolve(message.listening);
        });
        worker.once('exit', (code, signal) => reject(new Error(`worker ${number} exited during start-up (${signal ?? `code ${code}`})`)));
      });
      worker.once('exit', (code, signal) => {
        if (stopping || workers.get(number) !== worker) return;
        const restart = restarts.get(number) ?? { pauseMs: 0 };
        restart.pauseMs = Date.now() - startedAt < settledAfterMs ? Math.min(longestRestartPauseMs, Math.max(firstRestartPauseMs, restart.pauseMs * 2)) : 0;
        restarts.set(number, restart);
        logger.error({ worker: number, pid: worker.process.pid, code, signal, restartInMs: restart.pauseMs }, `worker ${number} (pid ${worker.process.pid}) died (${signal ?? `exit code ${code}`}); starting a new one`);
        restart.timer = setTimeout(() => {
          if (stopping) return;
          fork(number).then(
            () => logger.info({ worker: number, pid: workers.get(number)?.process.pid }, `worker ${number} is serving again`),
            () => {}, // its exit is logged and handled by the exit listener above
          );
        }, restart.pauseMs);
      });
      return listening;
    };

    const started = await Promise.all(Array.from({ length: config.workers }, (_, index) => fork(index + 1)));
    logger.info({ workers: config.workers, connectionsPerWorker: workerPoolSize(config.workers), pids: [...workers.values()].map((worker) => worker.process.pid) }, `${config.workers} workers serving`);
    return {
      listening: started[0]!,
      async stop() {
        await drain();
        await release();
      },
      killWorkers() {
        for (const worker of workers.values()) if (!worker.isDead()) worker.process.kill('SIGKILL');
      },
    };
  } catch (error) {
    await drain();
    await release();
    throw error;
  }
}
