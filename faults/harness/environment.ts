import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { GatewayProcess, type SurfaceName } from './gateway-process.ts';
import type { ScenarioContext, ScenarioReport } from './scenario.ts';
import { check } from './scenario.ts';

/**
 * A scenario's own world: a database of its own on the private PostgreSQL, a fresh data directory
 * and a service process on fixed loopback ports. `sql` is a direct connection for the checks that
 * look behind the service (orphan rows, stored hashes).
 */
export interface Environment {
  gateway: GatewayProcess;
  databaseUrl: string;
  sql: pg.Pool;
  close(): Promise<void>;
}

/** A new database of the scenario's own on the private PostgreSQL; returns its URL. */
export async function createScenarioDatabase(context: ScenarioContext, name: string): Promise<string> {
  const database = `faults_${name.replace(/[^a-z0-9]/g, '_')}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: context.postgres.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${database}`);
  } finally {
    await admin.end();
  }
  return context.postgres.url.replace(/\/postgres$/, `/${database}`);
}

export async function createEnvironment(context: ScenarioContext, name: string, options: { env?: NodeJS.ProcessEnv; dataDir?: string } = {}): Promise<Environment> {
  const databaseUrl = await createScenarioDatabase(context, name);
  const dataDir = options.dataDir ?? join(context.workDir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const gateway = await GatewayProcess.create({ dataDir, databaseUrl, ...(options.env ? { env: options.env } : {}) });
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  sql.on('error', () => {});
  return {
    gateway,
    databaseUrl,
    sql,
    async close() {
      await gateway.stop();
      await sql.end().catch(() => {});
    },
  };
}

/** Records whether the surfaces a scenario needs are running; returns the missing ones. */
export function requireSurfaces(report: ScenarioReport, gateway: GatewayProcess, needed: SurfaceName[]): SurfaceName[] {
  const missing = needed.filter((name) => !gateway.listening.has(name));
  check(
    report,
    'surfaces under test are running',
    missing.length === 0,
    missing.length ? `not started by \`serve\` (not in src/server/surfaces.ts yet): ${missing.join(', ')}` : needed.join(', '),
  );
  return missing;
}
