/**
 * Traffic refused before it reached a site's data, as operators read it: who knocked (remote
 * address, AE titles, MSH-3/MSH-4, key prefix), on which surface, why, and how often. Rows are
 * written by the recorder (recorder.ts), which bounds how many a flood can make.
 */
import type { Queryable } from '../../storage/database.ts';

export const refusedSurfaces = ['mllp', 'dicom', 'http'] as const;
export type RefusedSurface = (typeof refusedSurfaces)[number];

/** Stable codes for why something was refused; the text of `reason` says it for a person. */
export type RefusedKind =
  | 'mllp-address-not-admitted'
  | 'mllp-sender-not-authorized'
  | 'dicom-called-ae-unknown'
  | 'dicom-association-rejected'
  | 'http-api-key-unknown'
  | 'http-api-key-revoked';

export interface RefusedEvent {
  /** The site concerned, when one is known. */
  siteId?: string | null;
  surface: RefusedSurface;
  kind: RefusedKind;
  remoteAddress: string;
  reason: string;
  /** Never a secret (no API key beyond its prefix, no message content beyond the header). */
  details?: Record<string, string>;
}

export interface RefusedEntry {
  id: string;
  siteId: string | null;
  surface: RefusedSurface;
  kind: RefusedKind;
  remoteAddress: string;
  reason: string;
  details: Record<string, string>;
  occurredAt: string;
  /** Further events of the same site, kind and address in the same minute, counted here. */
  suppressed: number;
  lastAt: string;
}

export const maxRefusedPage = 200;

interface Row {
  id: string;
  site_id: string | null;
  surface: RefusedSurface;
  kind: RefusedKind;
  remote_address: string;
  reason: string;
  details: Record<string, string>;
  occurred_at: Date;
  suppressed: number;
  last_at: Date;
}

/**
 * Newest first. `siteId`: one site's entries; `siteId: null`: those of no known site; absent:
 * every entry (service administrators).
 */
export async function listRefusedTraffic(
  db: Queryable,
  options: { siteId?: string | null; surface?: RefusedSurface; limit?: number; before?: string } = {},
): Promise<{ entries: RefusedEntry[]; nextBefore?: string }> {
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? 50), 1), maxRefusedPage);
  const before = options.before !== undefined && /^\d{1,18}$/.test(options.before) ? options.before : null;
  const scope = options.siteId === undefined ? 'TRUE' : options.siteId === null ? 'site_id IS NULL' : 'site_id = $4::uuid';
  const values: unknown[] = [before, options.surface ?? null, limit + 1];
  if (typeof options.siteId === 'string') values.push(options.siteId);
  const { rows } = await db.query<Row>(
    `SELECT id::text, site_id, surface, kind, remote_address, reason, details, occurred_at, suppressed, last_at FROM refused_traffic
      WHERE ${scope} AND ($1::bigint IS NULL OR id < $1::bigint) AND ($2::text IS NULL OR surface = $2)
      ORDER BY id DESC LIMIT $3`,
    values,
  );
  const page = rows.slice(0, limit);
  return {
    entries: page.map((row) => ({
      id: row.id,
      siteId: row.site_id,
      surface: row.surface,
      kind: row.kind,
      remoteAddress: row.remote_address,
      reason: row.reason,
      details: row.details,
      occurredAt: row.occurred_at.toISOString(),
      suppressed: row.suppressed,
      lastAt: row.last_at.toISOString(),
    })),
    ...(rows.length > limit ? { nextBefore: page[page.length - 1]!.id } : {}),
  };
}

/** The JSON shape of an entry (admin API and CLI alike). */
export function refusedEntryJson(entry: RefusedEntry) {
  return {
    id: entry.id,
    site_id: entry.siteId,
    surface: entry.surface,
    kind: entry.kind,
    remote_address: entry.remoteAddress,
    reason: entry.reason,
    details: entry.details,
    occurred_at: entry.occurredAt,
    suppressed: entry.suppressed,
    last_at: entry.lastAt,
  };
}
