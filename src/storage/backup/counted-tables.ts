import type { Queryable } from '../database.ts';

/**
 * The tables whose row counts a manifest records and a restore compares: the operator's
 * configuration (sites, users, keys, clients) and the clinical data. Exact counts, taken in the
 * backup's snapshot; the other tables are checked by pg_restore itself.
 */
export const countedTables = ['site', 'app_user', 'api_key', 'integration_client', 'clinical_resource', 'inbound_message', 'imaging_study', 'imaging_instance'] as const;

export async function countRows(db: Queryable): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of countedTables) {
    const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
    counts[table] = Number(rows[0]!.n);
  }
  return counts;
}

/** The newest migration applied and how many are, as schema_migration records them. */
export async function schemaLevel(db: Queryable): Promise<{ newestMigration: number; migrations: number }> {
  const { rows } = await db.query<{ newest: number | null; n: string }>('SELECT max(version) AS newest, count(*) AS n FROM schema_migration');
  return { newestMigration: rows[0]!.newest ?? 0, migrations: Number(rows[0]!.n) };
}
