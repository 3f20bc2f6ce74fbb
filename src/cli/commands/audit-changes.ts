import { listAudit } from '../../domain/audit/audit.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandContext } from '../command.ts';
import { formatTable, print } from '../output.ts';
import { integerOption } from '../switches.ts';
import { withDatabase } from '../with-database.ts';

/**
 * audit changes: the audit log of changes (who created, changed, revoked what), of one site or,
 * without --site, of the whole service; newest first, paged like the admin app's.
 */
export async function auditChangesCommand({ options, json }: CommandContext): Promise<void> {
  const limit = integerOption(options, 'limit') ?? 50;
  if (limit < 1 || limit > 500) throw new UsageError('--limit must be 1 to 500');
  const before = options.optional('before');
  if (before !== undefined && !/^[0-9]{1,18}$/.test(before)) throw new UsageError('--before must be the next_before of the previous page');
  const events = await withDatabase(async (db) => {
    const site = options.optional('site');
    return listAudit(db, { limit, ...(site !== undefined ? { siteId: (await resolveSite(db, site)).id } : {}), ...(before !== undefined ? { beforeId: before } : {}) });
  });
  const rows = events.map((event) => ({
    id: event.id,
    occurred_at: event.occurredAt,
    site_id: event.siteId,
    actor: event.actor,
    action: event.action,
    target_type: event.targetType,
    target_id: event.targetId,
    details: event.details,
  }));
  const page = { events: rows, ...(rows.length === limit ? { next_before: rows[rows.length - 1]!.id } : {}) };
  print(page, json, () => formatTable(rows, ['id', 'occurred_at', 'actor', 'action', 'target_type', 'target_id']) + (page.next_before ? `\n(more: --before ${page.next_before})` : ''));
}
