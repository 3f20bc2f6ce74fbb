import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import { recoverNodeTemporaryFolders } from '../dicom/transfer-recovery.ts';
import type { Services } from '../platform/services.ts';
import type { Database } from '../storage/database.ts';
import { migrate } from '../storage/migrations.ts';
import { startDataLifecycleJob } from '../domain/retention/data-lifecycle-job.ts';
import { startPlannerStatistics, type PlannerStatistics } from '../storage/planner-statistics.ts';
import { ensureInitialAdmin } from './first-run.ts';
import { identifyNode } from './node-identity.ts';
import { acquireNodeLease } from './node-lease.ts';
import type { OpenedDatabase } from './open-database.ts';

// What exists once per node, for the single serving process and for a supervisor alike. The
// supervisor loads only this module and its own (no surface, no FHIR definitions, no HTTP
// framework), so that a node with workers does not pay for the whole service a second time.

export interface PreparedNode {
  /** Stops the planner statistics and gives the node id's lease up. */
  stop(): Promise<void>;
}

/**
 * What runs once per node before any surface accepts: migrations, the node id's lease, the
 * first-run admin, planner statistics. Each is safe against another node doing the same at the
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
