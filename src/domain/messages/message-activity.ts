/**
 * A site's HL7 traffic at a glance: received, accepted, errored and refused counts for the last
 * hour and day, the same per sender (transport and MSH-3/MSH-4) with its last message, and a
 * five-minute series over the day for the chart. Reads the log's (site_id, received_at, seq)
 * index over one day only, and the site's refused traffic of that day.
 */
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';

export interface ActivityCounts {
  received: number;
  accepted: number;
  errored: number;
  refused: number;
}

export interface SenderActivity {
  transport: string;
  sendingApplication: string;
  sendingFacility: string;
  lastHour: ActivityCounts;
  lastDay: ActivityCounts;
  lastMessageAt: string;
}

export interface SiteActivity {
  generatedAt: string;
  lastHour: ActivityCounts;
  lastDay: ActivityCounts;
  lastMessageAt: string | null;
  /** Connections, associations and requests refused on the site's behalf in the last day (repeats counted). */
  refusedTrafficLastDay: number;
  senders: SenderActivity[];
  /** Five-minute buckets over the last day, oldest first, empty buckets included. */
  series: { at: string; received: number; errored: number }[];
}

export const maxSenders = 50;

interface CountRow {
  h_received: number; h_accepted: number; h_errored: number; h_refused: number;
  d_received: number; d_accepted: number; d_errored: number; d_refused: number;
}

const counts = `
  count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour')::int AS h_received,
  count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour' AND outcome = 'processed')::int AS h_accepted,
  count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour' AND outcome IN ('error', 'rejected'))::int AS h_errored,
  count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour' AND outcome = 'refused')::int AS h_refused,
  count(*)::int AS d_received,
  count(*) FILTER (WHERE outcome = 'processed')::int AS d_accepted,
  count(*) FILTER (WHERE outcome IN ('error', 'rejected'))::int AS d_errored,
  count(*) FILTER (WHERE outcome = 'refused')::int AS d_refused`;
const lastDay = `site_id = $1 AND received_at >= $2::timestamptz - interval '1 day' AND received_at <= $2::timestamptz`;

function split(row: CountRow): { lastHour: ActivityCounts; lastDay: ActivityCounts } {
  return {
    lastHour: { received: row.h_received, accepted: row.h_accepted, errored: row.h_errored, refused: row.h_refused },
    lastDay: { received: row.d_received, accepted: row.d_accepted, errored: row.d_errored, refused: row.d_refused },
  };
}

export async function siteActivity(db: Queryable, site: SiteContext, now = new Date()): Promise<SiteActivity> {
  const values = [site.siteId, now];
  const [total, senders, series, last, refused] = await Promise.all([
    db.query<CountRow>(`SELECT ${counts} FROM inbound_message WHERE ${lastDay}`, values),
    db.query<CountRow & { transport: string; sending_application: string; sending_facility: string; last_at: Date }>(
      `SELECT transport, sending_application, sending_facility, max(received_at) AS last_at, ${counts}
         FROM inbound_message WHERE ${lastDay}
        GROUP BY transport, sending_application, sending_facility ORDER BY d_received DESC, sending_application, sending_facility, transport LIMIT ${maxSenders}`,
      values,
    ),
    db.query<{ at: Date; received: number; errored: number }>(
      `SELECT buckets.at, count(m.*)::int AS received, count(m.*) FILTER (WHERE m.outcome <> 'processed')::int AS errored
         FROM generate_series(date_bin('5 minutes', $2::timestamptz - interval '1 day', timestamptz 'epoch') + interval '5 minutes',
                              date_bin('5 minutes', $2::timestamptz, timestamptz 'epoch'), interval '5 minutes') AS buckets(at)
         LEFT JOIN inbound_message m ON m.site_id = $1 AND m.received_at >= buckets.at AND m.received_at < buckets.at + interval '5 minutes'
        GROUP BY buckets.at ORDER BY buckets.at`,
      values,
    ),
    db.query<{ at: Date | null }>(`SELECT max(received_at) AS at FROM inbound_message WHERE site_id = $1`, [site.siteId]),
    db.query<{ n: number }>(
      `SELECT coalesce(sum(1 + suppressed), 0)::int AS n FROM refused_traffic WHERE site_id = $1 AND occurred_at >= $2::timestamptz - interval '1 day'`,
      values,
    ),
  ]);
  return {
    generatedAt: now.toISOString(),
    ...split(total.rows[0]!),
    lastMessageAt: last.rows[0]?.at?.toISOString() ?? null,
    refusedTrafficLastDay: refused.rows[0]!.n,
    senders: senders.rows.map((row) => ({
      transport: row.transport,
      sendingApplication: row.sending_application,
      sendingFacility: row.sending_facility,
      ...split(row),
      lastMessageAt: row.last_at.toISOString(),
    })),
    series: series.rows.map((row) => ({ at: row.at.toISOString(), received: row.received, errored: row.errored })),
  };
}
