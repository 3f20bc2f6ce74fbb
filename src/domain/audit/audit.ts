import type { Queryable } from '../../storage/database.ts';
import { describeActor, type Actor } from '../site-context.ts';

export interface AuditInput {
  siteId?: string | null;
  actor: Actor;
  action: string;
  targetType: string;
  targetId?: string;
  /** Never a secret: keys and passwords are not recorded. */
  details?: Record<string, unknown>;
}

export interface AuditEvent {
  id: string;
  occurredAt: Date;
  siteId: string | null;
  actor: string;
  action: string;
  targetType: string;
  targetId: string | null;
  details: Record<string, unknown>;
}

export async function recordAudit(db: Queryable, input: AuditInput): Promise<void> {
  await db.query(
    'INSERT INTO audit_event (site_id, actor, action, target_type, target_id, details) VALUES ($1, $2, $3, $4, $5, $6)',
    [input.siteId ?? null, describeActor(input.actor), input.action, input.targetType, input.targetId ?? null, JSON.stringify(input.details ?? {})],
  );
}

/** Audit events of one site, or of every site (and service-wide events) when siteId is undefined. */
export async function listAudit(db: Queryable, options: { siteId?: string; limit?: number; beforeId?: string } = {}): Promise<AuditEvent[]> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 500);
  const { rows } = await db.query<{
    id: string; occurred_at: Date; site_id: string | null; actor: string; action: string; target_type: string; target_id: string | null; details: Record<string, unknown>;
  }>(
    `SELECT id::text, occurred_at, site_id, actor, action, target_type, target_id, details FROM audit_event
     WHERE ($1::uuid IS NULL OR site_id = $1) AND ($2::bigint IS NULL OR id < $2)
     ORDER BY audit_event.id DESC LIMIT $3`,
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
