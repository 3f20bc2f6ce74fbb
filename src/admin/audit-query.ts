/**
 * Audit events newest first, for the audit pages. The domain's listAudit selects `id::text AS id`
 * and orders by `id`, which PostgreSQL resolves to the text output column, so event 9 sorts
 * before event 10; until that is fixed there, this reads the same table ordered by the bigint.
 */
import type { AuditEvent } from '../domain/audit/audit.ts';
import type { Queryable } from '../storage/database.ts';

export async function listAuditEvents(db: Queryable, options: { siteId?: string; limit: number; beforeId?: string }): Promise<AuditEvent[]> {
  const limit = Math.min(Math.max(options.limit, 1), 500);
  const { rows } = await db.query<{
    id: string; occurred_at: Date; site_id: string | null; actor: string; action: string; target_type: string; target_id: string | null; details: Record<string, unknown>;
  }>(
    `SELECT a.id::text AS id, a.occurred_at, a.site_id, a.actor, a.action, a.target_type, a.target_id, a.details FROM audit_event a
     WHERE ($1::uuid IS NULL OR a.site_id = $1) AND ($2::bigint IS NULL OR a.id < $2::bigint)
     ORDER BY a.id DESC LIMIT $3`,
    [options.siteId ?? null, options.beforeId ?? null, limit],
  );
  return rows.map((row) => ({
    id: row.id,
    occurredAt: row.occurred_at,
    siteId: row.site_id,
    actor: row.actor,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    details: row.details,
  }));
}
