/**
 * Each site's storage use: rows and bytes in every table with a site_id column (read from the
 * catalogue, so a new table is counted without a change here) and the bytes of its stored DICOM
 * instances (imaging_instance.size_bytes, recorded at store time: no file is read). Bytes of a
 * table are the sum of pg_column_size of its rows: the data as stored (compressed values
 * compressed), without indexes or free space. Computing it reads every row of every such table,
 * so the background job does it and keeps the result in site_storage_usage; readers read that.
 */
import type { Database, Queryable } from '../../storage/database.ts';
import { quotedIdentifier, tablesWithSiteColumn } from './site-tables.ts';

export const dicomFilesItem = 'dicom-files';

export interface UsageItem {
  /** A table name, or 'dicom-files'. */
  item: string;
  rows: number;
  bytes: number;
}

export interface SiteStorageUsage {
  siteId: string;
  /** When the figures were computed; null when never (the job has not run yet). */
  computedAt: Date | null;
  items: UsageItem[];
  databaseRows: number;
  databaseBytes: number;
  dicomInstances: number;
  dicomBytes: number;
}

/** Computes every site's figures and replaces the stored ones; returns how many rows it wrote. */
export async function refreshStorageUsage(database: Database): Promise<number> {
  const computedAt = new Date();
  const figures: { siteId: string; item: string; rows: string; bytes: string }[] = [];
  // One statement per table, outside any long transaction: a table's scan holds no lock intake waits on.
  for (const table of (await tablesWithSiteColumn(database)).filter((name) => name !== 'site_storage_usage')) {
    const { rows } = await database.query<{ site_id: string; rows: string; bytes: string }>(
      `SELECT site_id, count(*)::bigint AS rows, coalesce(sum(pg_column_size(t.*)), 0)::bigint AS bytes
         FROM ${quotedIdentifier(table)} t WHERE site_id IS NOT NULL GROUP BY site_id`,
    );
    for (const row of rows) figures.push({ siteId: row.site_id, item: table, rows: row.rows, bytes: row.bytes });
  }
  const { rows: dicom } = await database.query<{ site_id: string; rows: string; bytes: string }>(
    'SELECT site_id, count(*)::bigint AS rows, coalesce(sum(size_bytes), 0)::bigint AS bytes FROM imaging_instance GROUP BY site_id',
  );
  for (const row of dicom) figures.push({ siteId: row.site_id, item: dicomFilesItem, rows: row.rows, bytes: row.bytes });
  await database.transaction(async (tx) => {
    await tx.query('DELETE FROM site_storage_usage');
    if (figures.length === 0) return;
    await tx.query(
      `INSERT INTO site_storage_usage (site_id, item, row_count, bytes, computed_at)
       SELECT f.site_id, f.item, f.row_count, f.bytes, $5 FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::bigint[]) AS f(site_id, item, row_count, bytes)
        WHERE EXISTS (SELECT 1 FROM site s WHERE s.id = f.site_id)`,
      [figures.map((f) => f.siteId), figures.map((f) => f.item), figures.map((f) => f.rows), figures.map((f) => f.bytes), computedAt],
    );
  });
  return figures.length;
}

/** The stored figures of one site (all zero, computedAt null, before the job's first run). */
export async function readStorageUsage(db: Queryable, siteId: string): Promise<SiteStorageUsage> {
  const { rows } = await db.query<{ item: string; row_count: string; bytes: string; computed_at: Date }>(
    'SELECT item, row_count, bytes, computed_at FROM site_storage_usage WHERE site_id = $1 ORDER BY bytes DESC, item',
    [siteId],
  );
  const items = rows.map((row) => ({ item: row.item, rows: Number(row.row_count), bytes: Number(row.bytes) }));
  const tables = items.filter((item) => item.item !== dicomFilesItem);
  const dicom = items.find((item) => item.item === dicomFilesItem);
  return {
    siteId,
    computedAt: rows.length > 0 ? rows.map((row) => row.computed_at).reduce((a, b) => (a < b ? a : b)) : null,
    items,
    databaseRows: tables.reduce((sum, item) => sum + item.rows, 0),
    databaseBytes: tables.reduce((sum, item) => sum + item.bytes, 0),
    dicomInstances: dicom?.rows ?? 0,
    dicomBytes: dicom?.bytes ?? 0,
  };
}

/** The figures as the admin API and the CLI's JSON spell them. */
export function storageUsageView(usage: SiteStorageUsage) {
  return {
    site_id: usage.siteId,
    computed_at: usage.computedAt,
    database_rows: usage.databaseRows,
    database_bytes: usage.databaseBytes,
    dicom_instances: usage.dicomInstances,
    dicom_bytes: usage.dicomBytes,
    items: usage.items,
  };
}
