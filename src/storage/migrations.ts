import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';
import { TransientStorageError, isTransientDatabaseError } from './errors.ts';

const migrationsDirectory = fileURLToPath(new URL('./migrations/', import.meta.url));
const migrationFileName = /^(\d{4})_([a-z0-9_]+)\.sql$/;
// Any constant works; it only has to be the same for every process that migrates this database.
const migrationLockKey = 7_355_608_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: number;
}

export async function loadMigrations(directory = migrationsDirectory): Promise<Migration[]> {
  const files = (await readdir(directory)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = migrationFileName.exec(file);
    if (!match) throw new Error(`migration file ${file} does not follow NNNN_name.sql`);
    const sql = await readFile(`${directory}/${file}`, 'utf8');
    migrations.push({
      version: Number(match[1]),
      name: match[2]!,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    });
  }
  const versions = new Set<number>();
  for (const migration of migrations) {
    if (versions.has(migration.version)) throw new Error(`two migrations share version ${migration.version}`);
    versions.add(migration.version);
  }
  return migrations;
}

/**
 * Applies every migration not yet recorded, each in its own transaction. An advisory lock makes
 * concurrent callers (the service starting while `migrate` runs, parallel test files) wait for
 * each other instead of racing.
 */
export async function migrate(database: Database, options: { only?: (migration: Migration) => boolean } = {}): Promise<MigrationReport> {
  // `only`: a subset, for tests that build an earlier schema (test/storage/upgrade-from-oldest-schema.test.ts).
  const migrations = (await loadMigrations()).filter(options.only ?? (() => true));
  let client;
  try {
    client = await database.pool.connect();
  } catch (error) {
    throw isTransientDatabaseError(error) ? new TransientStorageError('the database is unavailable', { cause: error }) : error;
  }
  const ignoreClientError = () => {};
  client.on('error', ignoreClientError);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migration (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
      'SELECT version, name, checksum FROM schema_migration',
    );
    const applied = new Map(rows.map((row) => [row.version, row]));
    const report: MigrationReport = { applied: [], alreadyApplied: 0 };
    for (const migration of migrations) {
      const previous = applied.get(migration.version);
      if (previous) {
        if (previous.checksum !== migration.checksum) {
          throw new Error(
            `migration ${migration.version}_${migration.name} changed after it was applied; add a new migration instead`,
          );
        }
        report.alreadyApplied++;
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migration (version, name, checksum) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          migration.checksum,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`migration ${migration.version}_${migration.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      report.applied.push(`${String(migration.version).padStart(4, '0')}_${migration.name}`);
    }
    return report;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [migrationLockKey]).catch(() => {});
    client.off('error', ignoreClientError);
    client.release();
  }
}
