import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/env.ts';
import { Database } from '../storage/database.ts';
import { openEmbeddedPostgres } from '../storage/embedded-postgres.ts';

export interface OpenedDatabase {
  database: Database;
  /** Where the database is, for other processes of this node (the workers). */
  connectionString: string;
  /** 'external' for CG_DATABASE_URL, else the embedded server. */
  kind: 'external' | 'embedded';
  close(): Promise<void>;
}

/** CG_DATABASE_URL when set; otherwise the embedded PostgreSQL under CG_DATA_DIR. */
export async function openDatabase(config: GatewayConfig, logger: Logger, options: { maxConnections?: number; searchConnections?: number } = {}): Promise<OpenedDatabase> {
  if (config.databaseUrl) {
    const database = new Database({ connectionString: config.databaseUrl, maxConnections: options.maxConnections ?? 20, searchConnections: options.searchConnections ?? config.limits.search.connections });
    return { database, connectionString: config.databaseUrl, kind: 'external', close: () => database.close() };
  }
  const embedded = await openEmbeddedPostgres({
    dataDir: config.dataDir,
    log: (message) => logger.warn({ postgres: message }, 'embedded PostgreSQL'),
    // Backups of CG_DATA_DIR do not hold what lives elsewhere: say where it went, at every start.
    // Info, not a warning: nothing is wrong, and the CLI, which prints warnings, keeps its output clean.
    placed: (moved) => logger.info(moved, 'embedded PostgreSQL placed where its user postgres can reach it (the checkout or CG_DATA_DIR is under a private folder); CG_DATA_DIR/postgres links to its data'),
  });
  const database = new Database({ connectionString: embedded.connectionString, maxConnections: options.maxConnections ?? 20, searchConnections: options.searchConnections ?? config.limits.search.connections });
  return {
    database,
    connectionString: embedded.connectionString,
    kind: 'embedded',
    async close() {
      await database.close();
      await embedded.stop();
    },
  };
}
