import { dataAccessJson, listDataAccess, maxDataAccessPage, purgeDataAccess, resolveAccessActors } from '../../domain/audit/data-access-log.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

function instant(options: CommandOptions, name: string): Date | undefined {
  const text = options.optional(name);
  if (text === undefined) return undefined;
  const value = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(value.getTime())) throw new UsageError(`--${name} must be a date or an ISO 8601 instant (2026-01-31 or 2026-01-31T08:00:00Z)`);
  return value;
}

/** audit list: the site's data access log; audit purge: drop rows past each site's retention. */
export async function auditCommand({ action, options, json }: CommandContext): Promise<void> {
  if (action === 'purge') {
    const purged = await withDatabase(async (db) => {
      const site = options.optional('site');
      return purgeDataAccess(db, site === undefined ? {} : { siteId: (await resolveSite(db, site)).id });
    });
    const rows = purged.map((entry) => ({ site_id: entry.siteId, deleted: entry.deleted }));
    print({ purged: rows }, json, () => (rows.length === 0 ? 'nothing is past its retention' : formatTable(rows, ['site_id', 'deleted'])));
    return;
  }
  const limit = Number(options.optional('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > maxDataAccessPage) throw new UsageError(`--limit must be 1 to ${maxDataAccessPage}`);
  const since = instant(options, 'since');
  const until = instant(options, 'until');
  const page = await withDatabase(async (db) => {
    const site = await resolveSite(db, options.required('site'));
    const user = options.optional('user');
    const key = options.optional('key');
    const patient = options.optional('patient');
    const before = options.optional('before');
    const actors = await resolveAccessActors(db, site.id, { ...(user !== undefined ? { user } : {}), ...(key !== undefined ? { key } : {}) });
    return listDataAccess(db, site.id, {
      ...actors,
      ...(patient !== undefined ? { patientId: patient } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      limit,
      ...(before !== undefined ? { beforeId: before } : {}),
    });
  });
  const rows = page.entries.map((entry) => ({
    ...dataAccessJson(entry),
    who: entry.keyPrefix ? `${entry.keyPrefix} (${entry.userEmail ?? entry.userId})` : (entry.userEmail ?? entry.userId),
  }));
  print({ entries: rows, ...(page.nextBefore ? { next_before: page.nextBefore } : {}) }, json, () =>
    formatTable(rows, ['occurred_at', 'who', 'remote_address', 'surface', 'interaction', 'resource_type', 'resource_count', 'patient_ids']) +
    (page.nextBefore ? `\n(older: --before ${page.nextBefore})` : ''),
  );
}
