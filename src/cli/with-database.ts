import { loadConfig } from '../config/env.ts';
import { createLogger } from '../server/logger.ts';
import { openDatabase } from '../server/open-database.ts';
import type { Database } from '../storage/database.ts';
import { migrate } from '../storage/migrations.ts';

/**
 * Runs a command against the service's database: CG_DATABASE_URL, or the embedded server under
 * CG_DATA_DIR (the running service's, when it runs; else one started for this command only).
 * Changes are committed before the command returns, so a running service sees them at once.
 */
export async function withDatabase<T>(work: (database: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const opened = await openDatabase(config, logger, { maxConnections: 2 });
  try {
    await migrate(opened.database);
    return await work(opened.database);
  } finally {
    await opened.close();
  }
}
