/**
 * Site offboarding in two steps: mark (the grace period starts; the site works as before, so that
 * its data can be exported), then purge once the grace period has passed: every row of the site
 * in every table that has a site_id column (read from the catalogue, so a new table is purged
 * without a change here), the rows of tables without one that reference those (a signed-in
 * user's sessions), the site itself, then its DICOM and export folders. Each step is audited;
 * the purge's record is service-wide (no site_id), since the site's own records go with it.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database, Queryable } from '../../storage/database.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../site-context.ts';
import { findSiteById } from '../sites/sites.ts';
import { quotedIdentifier, tablesWithSiteColumn } from './site-tables.ts';

export interface OffboardingState {
  siteId: string;
  name: string;
  markedAt: Date | null;
  purgeAfter: Date | null;
}

export interface SiteFolders {
  dicomStorageDir: string;
  exportDir: string;
}

export interface SitePurgeReport {
  siteId: string;
  name: string;
  /** Rows deleted per table. */
  deleted: Record<string, number>;
}

async function stateOf(db: Queryable, siteId: string): Promise<OffboardingState> {
  const { rows } = await db.query<{ id: string; name: string; offboarding_marked_at: Date | null; purge_after: Date | null }>(
    'SELECT id, name, offboarding_marked_at, purge_after FROM site WHERE id = $1',
    [siteId],
  );
  const row = rows[0];
  if (!row) throw new DomainError('not-found', 'no such site');
  return { siteId: row.id, name: row.name, markedAt: row.offboarding_marked_at, purgeAfter: row.purge_after };
}

export async function markSiteForPurge(db: Queryable, siteId: string, graceDays: number, actor: Actor): Promise<OffboardingState> {
  if (!Number.isInteger(graceDays) || graceDays < 1 || graceDays > 365) {
    throw new DomainError('invalid', 'the grace period must be 1 to 365 days', [{ message: 'must be 1 to 365 days', location: 'grace_days' }]);
  }
  if (!(await findSiteById(db, siteId))) throw new DomainError('not-found', 'no such site');
  await db.query(
    `UPDATE site SET offboarding_marked_at = now(), purge_after = now() + make_interval(days => $2), updated_at = now() WHERE id = $1`,
    [siteId, graceDays],
  );
  const state = await stateOf(db, siteId);
  await recordAudit(db, { siteId, actor, action: 'site.offboarding-marked', targetType: 'site', targetId: siteId, details: { graceDays, purgeAfter: state.purgeAfter } });
  return state;
}

export async function cancelSitePurge(db: Queryable, siteId: string, actor: Actor): Promise<OffboardingState> {
  const { rowCount } = await db.query('UPDATE site SET offboarding_marked_at = NULL, purge_after = NULL, updated_at = now() WHERE id = $1 AND purge_after IS NOT NULL', [siteId]);
  if (rowCount) await recordAudit(db, { siteId, actor, action: 'site.offboarding-cancelled', targetType: 'site', targetId: siteId });
  return stateOf(db, siteId);
}

interface ForeignKey {
  child: string;
  parent: string;
  childColumns: string[];
  parentColumns: string[];
}

/** Tables with a site_id column, children first (each before every table it references). */
async function purgeOrder(db: Queryable): Promise<{ ordered: string[]; keys: ForeignKey[] }> {
  const tables = await tablesWithSiteColumn(db);
  const { rows: keys } = await db.query<{ child: string; parent: string; child_columns: string[]; parent_columns: string[] }>(
    `SELECT ch.relname AS child, pa.relname AS parent,
            array(SELECT attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i) JOIN pg_attribute ON attrelid = k.conrelid AND attnum = u.n ORDER BY i)::text[] AS child_columns,
            array(SELECT attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i) JOIN pg_attribute ON attrelid = k.confrelid AND attnum = u.n ORDER BY i)::text[] AS parent_columns
       FROM pg_constraint k JOIN pg_class ch ON ch.oid = k.conrelid JOIN pg_class pa ON pa.oid = k.confrelid
      WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace`,
  );
  const foreignKeys = keys.map((key) => ({ child: key.child, parent: key.parent, childColumns: key.child_columns, parentColumns: key.parent_columns }));
  const remaining = new Set(tables);
  const ordered: string[] = [];
  while (remaining.size > 0) {
    // A table goes when no table still to purge references it.
    const next = [...remaining].sort().find((table) => !foreignKeys.some((key) => key.parent === table && key.child !== table && remaining.has(key.child)));
    if (!next) throw new Error(`the tables ${[...remaining].join(', ')} reference each other in a cycle: the purge cannot order them`);
    ordered.push(next);
    remaining.delete(next);
  }
  return { ordered, keys: foreignKeys };
}

/** Deletes the child rows of `key` that reference parent rows whose `siteColumn` is the site; returns how many. */
async function deleteReferencing(db: Queryable, key: ForeignKey, siteColumn: 'site_id' | 'id', siteId: string): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM ${quotedIdentifier(key.child)} WHERE (${key.childColumns.map(quotedIdentifier).join(', ')})
        IN (SELECT ${key.parentColumns.map(quotedIdentifier).join(', ')} FROM ${quotedIdentifier(key.parent)} WHERE ${siteColumn} = $1)`,
    [siteId],
  );
  return rowCount ?? 0;
}

/**
 * Purges a site whose grace period has passed (by `options.now`); refuses one not marked or not
 * due. `options.by` says in the audit record what ran it (the background job, or the command).
 */
export async function purgeSite(database: Database, siteId: string, folders: SiteFolders, actor: Actor, options: { now?: Date; by?: string } = {}): Promise<SitePurgeReport> {
  const now = options.now ?? new Date();
  const report = await database.transaction(async (tx) => {
    const state = await stateOf(tx, siteId);
    if (!state.purgeAfter) throw new DomainError('conflict', 'the site is not marked for offboarding: mark it first (site offboard)');
    if (state.purgeAfter > now) throw new DomainError('conflict', `the site's grace period lasts until ${state.purgeAfter.toISOString()}`);
    // Nothing of the site may be written while it goes: its row is locked for the transaction.
    await tx.query('SELECT 1 FROM site WHERE id = $1 FOR UPDATE', [siteId]);
    const { ordered, keys } = await purgeOrder(tx);
    const siteTables = new Set(ordered);
    const deleted: Record<string, number> = {};
    for (const table of ordered) {
      // Rows of tables without site_id that reference this table's rows of the site go first.
      for (const key of keys.filter((k) => k.parent === table && !siteTables.has(k.child) && k.child !== 'site')) {
        deleted[key.child] = (deleted[key.child] ?? 0) + (await deleteReferencing(tx, key, 'site_id', siteId));
      }
      const { rowCount } = await tx.query(`DELETE FROM ${quotedIdentifier(table)} WHERE site_id = $1`, [siteId]);
      deleted[table] = (deleted[table] ?? 0) + (rowCount ?? 0);
    }
    // Rows of tables without site_id that point at the site itself under another column name.
    for (const key of keys.filter((k) => k.parent === 'site' && !siteTables.has(k.child))) {
      deleted[key.child] = (deleted[key.child] ?? 0) + (await deleteReferencing(tx, key, 'id', siteId));
    }
    await tx.query('DELETE FROM site WHERE id = $1', [siteId]);
    deleted.site = 1;
    await recordAudit(tx, { siteId: null, actor, action: 'site.purged', targetType: 'site', targetId: siteId, details: { name: state.name, markedAt: state.markedAt, deleted, by: options.by ?? 'site purge' } });
    return { siteId, name: state.name, deleted };
  });
  // After the commit: files whose rows are gone. A failure here leaves files no row names.
  await rm(join(folders.dicomStorageDir, siteId), { recursive: true, force: true });
  await rm(join(folders.exportDir, siteId), { recursive: true, force: true });
  return report;
}

/** Sites whose grace period has passed, for the background job. */
export async function sitesDueForPurge(db: Queryable, now = new Date()): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM site WHERE purge_after <= $1 ORDER BY purge_after', [now]);
  return rows.map((row) => row.id);
}
