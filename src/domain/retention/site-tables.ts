import type { Queryable } from '../../storage/database.ts';

/**
 * Every table of the schema with a site_id column, read from the catalogue: what storage use
 * counts and what a site's purge empties, so that a table added later is included without a
 * change there.
 */
export async function tablesWithSiteColumn(db: Queryable): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'site_id' AND NOT a.attisdropped
      WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
      ORDER BY c.relname`,
  );
  return rows.map((row) => row.name);
}

/** A table name as an SQL identifier. */
export const quotedIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;
