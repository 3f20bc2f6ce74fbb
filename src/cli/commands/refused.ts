import { listRefusedTraffic, maxRefusedPage, refusedEntryJson, refusedSurfaces, type RefusedSurface } from '../../domain/refused-traffic/refused-traffic.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import type { CommandContext } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

/** refused list: refused connections, associations and requests; a site's, those of no site, or all. */
export async function refusedCommand({ options, json }: CommandContext): Promise<void> {
  const limit = Number(options.optional('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > maxRefusedPage) throw new UsageError(`--limit must be 1 to ${maxRefusedPage}`);
  const surface = options.optional('surface');
  if (surface !== undefined && !(refusedSurfaces as readonly string[]).includes(surface)) throw new UsageError(`--surface must be one of: ${refusedSurfaces.join(', ')}`);
  const before = options.optional('before');
  if (before !== undefined && !/^\d{1,18}$/.test(before)) throw new UsageError('--before must be the cursor a previous page printed');
  const siteOption = options.optional('site');
  if (siteOption !== undefined && options.flag('no-site')) throw new UsageError('--site and --no-site exclude each other');
  const page = await withDatabase(async (db) => {
    const siteId = siteOption !== undefined ? (await resolveSite(db, siteOption)).id : options.flag('no-site') ? null : undefined;
    return listRefusedTraffic(db, { ...(siteId !== undefined ? { siteId } : {}), limit, ...(surface ? { surface: surface as RefusedSurface } : {}), ...(before ? { before } : {}) });
  });
  const rows = page.entries.map(refusedEntryJson);
  print({ entries: rows, ...(page.nextBefore ? { next_before: page.nextBefore } : {}) }, json, () =>
    formatTable(rows.map((entry) => ({ ...entry, repeats: entry.suppressed + 1 })), ['occurred_at', 'surface', 'kind', 'remote_address', 'reason', 'details', 'repeats']) +
    (page.nextBefore ? `\n(older: --before ${page.nextBefore})` : ''),
  );
}
