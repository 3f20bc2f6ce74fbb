/**
 * Searching and purging the data access log (see data-access.ts). A site's administrators search
 * their own site's log by patient, user, API key and time; rows older than the site's retention
 * (site.data_access_retention_days, six years by default) are purged.
 */
import type { Queryable } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import type { DataAccess, DataAccessInteraction } from './data-access.ts';

export interface DataAccessFilter {
  patientId?: string;
  userId?: string;
  keyId?: string;
  since?: Date;
  until?: Date;
  limit?: number;
  /** next_before of the previous page. */
  beforeId?: string;
}

export interface DataAccessEntry {
  id: string;
  occurredAt: Date;
  userId: string | null;
  userEmail: string | null;
  keyId: string | null;
  keyPrefix: string | null;
  remoteAddress: string | null;
  surface: DataAccess['surface'];
  interaction: DataAccessInteraction;
  resourceType: string;
  query: string | null;
  resourceIds: string[];
  resourceCount: number;
  patientIds: string[];
}

/** An entry as the operator sees it, in the API's and the CLI's JSON. */
export function dataAccessJson(entry: DataAccessEntry) {
  return {
    id: entry.id,
    occurred_at: entry.occurredAt,
    user_id: entry.userId,
    user_email: entry.userEmail,
    key_id: entry.keyId,
    key_prefix: entry.keyPrefix,
    remote_address: entry.remoteAddress,
    surface: entry.surface,
    interaction: entry.interaction,
    resource_type: entry.resourceType,
    query: entry.query,
    resource_ids: entry.resourceIds,
    resource_count: entry.resourceCount,
    patient_ids: entry.patientIds,
  };
}

export interface DataAccessPage {
  entries: DataAccessEntry[];
  nextBefore?: string;
}

export const maxDataAccessPage = 500;

interface EntryRow {
  id: string;
  occurred_at: Date;
  user_id: string | null;
  email: string | null;
  key_id: string | null;
  prefix: string | null;
  remote_address: string | null;
  surface: DataAccess['surface'];
  interaction: DataAccessInteraction;
  resource_type: string;
  query: string | null;
  resource_ids: string[];
  resource_count: number;
  patient_ids: string[];
}

/** Newest first. The user's e-mail and the key's prefix are looked up within the same site. */
export async function listDataAccess(db: Queryable, siteId: string, filter: DataAccessFilter = {}): Promise<DataAccessPage> {
  const limit = Math.min(Math.max(filter.limit ?? 50, 1), maxDataAccessPage);
  if (filter.since && filter.until && filter.since > filter.until) {
    throw new DomainError('invalid', 'since must not be after until', [{ message: 'since must not be after until', location: 'since' }]);
  }
  const { rows } = await db.query<EntryRow>(
    `SELECT a.id::text, a.occurred_at, a.user_id, u.email, a.key_id, k.prefix, a.remote_address, a.surface, a.interaction, a.resource_type,
            a.query, a.resource_ids, a.resource_count, a.patient_ids
       FROM data_access_audit a
       LEFT JOIN app_user u ON u.id = a.user_id AND u.site_id = a.site_id
       LEFT JOIN api_key k ON k.id = a.key_id AND k.site_id = a.site_id
      WHERE a.site_id = $1
        AND ($2::text IS NULL OR a.patient_ids @> ARRAY[$2::text])
        AND ($3::uuid IS NULL OR a.user_id = $3)
        AND ($4::uuid IS NULL OR a.key_id = $4)
        AND ($5::timestamptz IS NULL OR a.occurred_at >= $5)
        AND ($6::timestamptz IS NULL OR a.occurred_at < $6)
        AND ($7::bigint IS NULL OR a.id < $7)
      ORDER BY a.id DESC
      LIMIT $8`,
    [siteId, filter.patientId ?? null, filter.userId ?? null, filter.keyId ?? null, filter.since ?? null, filter.until ?? null, filter.beforeId ?? null, limit],
  );
  const entries = rows.map((row) => ({
    id: row.id,
    occurredAt: row.occurred_at,
    userId: row.user_id,
    userEmail: row.email,
    keyId: row.key_id,
    keyPrefix: row.prefix === null ? null : `cg_${row.prefix}`,
    remoteAddress: row.remote_address,
    surface: row.surface,
    interaction: row.interaction,
    resourceType: row.resource_type,
    query: row.query,
    resourceIds: row.resource_ids,
    resourceCount: row.resource_count,
    patientIds: row.patient_ids,
  }));
  return { entries, ...(entries.length === limit ? { nextBefore: entries[entries.length - 1]!.id } : {}) };
}

/**
 * Deletes the rows older than each site's retention, site by site (each delete keyed by its
 * site, as everything else here), in slices so that no statement holds locks for long.
 * Returns how many rows were deleted per site that had any.
 */
export async function purgeDataAccess(db: Queryable, options: { siteId?: string } = {}): Promise<{ siteId: string; deleted: number }[]> {
  const { rows: sites } = await db.query<{ id: string; retention_days: number }>(
    'SELECT id, data_access_retention_days AS retention_days FROM site WHERE ($1::uuid IS NULL OR id = $1) ORDER BY id',
    [options.siteId ?? null],
  );
  const purged: { siteId: string; deleted: number }[] = [];
  for (const site of sites) {
    let deleted = 0;
    for (;;) {
      const { rowCount } = await db.query(
        `DELETE FROM data_access_audit WHERE site_id = $1 AND id IN (
           SELECT id FROM data_access_audit WHERE site_id = $1 AND occurred_at < now() - make_interval(days => $2) LIMIT 10000)`,
        [site.id, site.retention_days],
      );
      deleted += rowCount ?? 0;
      if ((rowCount ?? 0) < 10_000) break;
    }
    if (deleted > 0) purged.push({ siteId: site.id, deleted });
  }
  return purged;
}

/**
 * USER (an id or an e-mail) and KEY (an id or a prefix, cg_…) of the site, as filters. One that
 * names nothing in the site filters everything out, exactly as one that names nothing at all.
 */
export async function resolveAccessActors(db: Queryable, siteId: string, names: { user?: string; key?: string }): Promise<{ userId?: string; keyId?: string }> {
  const nothing = '00000000-0000-0000-0000-000000000000';
  const resolved: { userId?: string; keyId?: string } = {};
  if (names.user !== undefined) {
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM app_user WHERE site_id = $1 AND (id::text = $2 OR lower(email) = lower($2))`,
      [siteId, names.user.trim()],
    );
    resolved.userId = rows[0]?.id ?? nothing;
  }
  if (names.key !== undefined) {
    const key = names.key.trim();
    const { rows } = await db.query<{ id: string }>(
      `SELECT id FROM api_key WHERE site_id = $1 AND (id::text = $2 OR prefix = $3)`,
      [siteId, key, key.replace(/^cg_/, '').split('_')[0]],
    );
    resolved.keyId = rows[0]?.id ?? nothing;
  }
  return resolved;
}
