/**
 * A site's senders of every kind over the last hour and day, each with its last activity:
 * integration clients (HL7 over MLLP, from the message log's client_id), API keys (requests
 * over FHIR, HL7 over HTTP, MPPS and DICOMweb, from traffic_minute) and calling AE titles
 * (instances stored from the imaging index, associations and failed instances from
 * traffic_minute, associations rejected from refused_traffic). Only the site's own rows are read.
 */
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';

export interface PeriodCounts {
  accepted: number;
  errored: number;
}

export interface ClientActivity {
  clientId: string;
  /** The client's name; null when the client was removed since. */
  name: string | null;
  lastHour: { received: number; accepted: number; errored: number };
  lastDay: { received: number; accepted: number; errored: number };
  lastMessageAt: string;
}

export interface KeyActivity {
  keyId: string;
  /** The key's prefix and label (never the secret); null when the key is not the site's any more. */
  prefix: string | null;
  label: string | null;
  surfaces: string[];
  lastHour: PeriodCounts;
  lastDay: PeriodCounts;
  lastRequestAt: string;
  lastErrorAt: string | null;
}

export interface AeTitleActivity {
  callingAeTitle: string;
  lastHour: AeCounts;
  lastDay: AeCounts;
  lastActivityAt: string;
}

export interface AeCounts {
  associations: number;
  associationsRejected: number;
  instancesStored: number;
  instancesFailed: number;
}

export const maxSendersPerKind = 50;

export async function clientActivity(db: Queryable, site: SiteContext, now = new Date()): Promise<ClientActivity[]> {
  const { rows } = await db.query<{
    client_id: string; name: string | null; last_at: Date;
    h_received: number; h_accepted: number; h_errored: number; d_received: number; d_accepted: number; d_errored: number;
  }>(
    `SELECT m.client_id, c.name, m.last_at, m.h_received, m.h_accepted, m.h_errored, m.d_received, m.d_accepted, m.d_errored
       FROM (SELECT client_id, max(received_at) AS last_at,
                    count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour')::int AS h_received,
                    count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour' AND outcome = 'processed')::int AS h_accepted,
                    count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour' AND outcome IN ('error', 'rejected'))::int AS h_errored,
                    count(*)::int AS d_received,
                    count(*) FILTER (WHERE outcome = 'processed')::int AS d_accepted,
                    count(*) FILTER (WHERE outcome IN ('error', 'rejected'))::int AS d_errored
               FROM inbound_message
              WHERE site_id = $1 AND received_at >= $2::timestamptz - interval '1 day' AND received_at <= $2::timestamptz AND client_id IS NOT NULL
              GROUP BY client_id) AS m
       LEFT JOIN integration_client c ON c.id = m.client_id AND c.site_id = $1
      ORDER BY m.d_received DESC, c.name LIMIT ${maxSendersPerKind}`,
    [site.siteId, now],
  );
  return rows.map((row) => ({
    clientId: row.client_id,
    name: row.name,
    lastHour: { received: row.h_received, accepted: row.h_accepted, errored: row.h_errored },
    lastDay: { received: row.d_received, accepted: row.d_accepted, errored: row.d_errored },
    lastMessageAt: row.last_at.toISOString(),
  }));
}

export async function keyActivity(db: Queryable, site: SiteContext, now = new Date()): Promise<KeyActivity[]> {
  const { rows } = await db.query<{
    sender: string; prefix: string | null; label: string | null; surfaces: string[]; last_at: Date; last_error_at: Date | null;
    h_accepted: number; h_errored: number; d_accepted: number; d_errored: number;
  }>(
    `SELECT t.sender, k.prefix, k.label, t.surfaces, t.last_at, t.last_error_at, t.h_accepted, t.h_errored, t.d_accepted, t.d_errored
       FROM (SELECT sender, array_agg(DISTINCT surface ORDER BY surface) AS surfaces, max(last_at) AS last_at, max(last_error_at) AS last_error_at,
                    coalesce(sum(accepted) FILTER (WHERE minute >= $2::timestamptz - interval '1 hour'), 0)::int AS h_accepted,
                    coalesce(sum(errored) FILTER (WHERE minute >= $2::timestamptz - interval '1 hour'), 0)::int AS h_errored,
                    sum(accepted)::int AS d_accepted, sum(errored)::int AS d_errored
               FROM traffic_minute
              WHERE site_id = $1 AND sender_kind = 'api-key' AND measure = 'request' AND ${lastDayOfMinutes}
              GROUP BY sender) AS t
       LEFT JOIN api_key k ON k.id::text = t.sender AND k.site_id = $1
      ORDER BY t.d_accepted + t.d_errored DESC, t.sender LIMIT ${maxSendersPerKind}`,
    [site.siteId, now],
  );
  return rows.map((row) => ({
    keyId: row.sender,
    prefix: row.prefix,
    label: row.label,
    surfaces: row.surfaces,
    lastHour: { accepted: row.h_accepted, errored: row.h_errored },
    lastDay: { accepted: row.d_accepted, errored: row.d_errored },
    lastRequestAt: row.last_at.toISOString(),
    lastErrorAt: row.last_error_at?.toISOString() ?? null,
  }));
}

/** Minutes that began within the day before `now` ($2), the current one included. */
const lastDayOfMinutes = `minute > $2::timestamptz - interval '1 day' - interval '1 minute' AND minute <= $2::timestamptz`;

export async function aeTitleActivity(db: Queryable, site: SiteContext, now = new Date()): Promise<AeTitleActivity[]> {
  const values = [site.siteId, now];
  const [stored, counted, rejected] = await Promise.all([
    db.query<{ ae: string; at: Date; hour: number; day: number }>(
      `SELECT calling_ae_title AS ae, max(received_at) AS at,
              count(*) FILTER (WHERE received_at >= $2::timestamptz - interval '1 hour')::int AS hour, count(*)::int AS day
         FROM imaging_instance
        WHERE site_id = $1 AND received_at >= $2::timestamptz - interval '1 day' AND received_at <= $2::timestamptz AND calling_ae_title IS NOT NULL
        GROUP BY calling_ae_title`,
      values,
    ),
    db.query<{ ae: string; measure: string; at: Date; h_accepted: number; h_errored: number; d_accepted: number; d_errored: number }>(
      `SELECT sender AS ae, measure, max(last_at) AS at,
              coalesce(sum(accepted) FILTER (WHERE minute >= $2::timestamptz - interval '1 hour'), 0)::int AS h_accepted,
              coalesce(sum(errored) FILTER (WHERE minute >= $2::timestamptz - interval '1 hour'), 0)::int AS h_errored,
              sum(accepted)::int AS d_accepted, sum(errored)::int AS d_errored
         FROM traffic_minute
        WHERE site_id = $1 AND sender_kind = 'ae-title' AND ${lastDayOfMinutes}
        GROUP BY sender, measure`,
      values,
    ),
    db.query<{ ae: string; at: Date; hour: number; day: number }>(
      `SELECT details->>'calling_ae_title' AS ae, max(last_at) AS at,
              coalesce(sum(1 + suppressed) FILTER (WHERE occurred_at >= $2::timestamptz - interval '1 hour'), 0)::int AS hour, sum(1 + suppressed)::int AS day
         FROM refused_traffic
        WHERE site_id = $1 AND surface = 'dicom' AND occurred_at >= $2::timestamptz - interval '1 day' AND occurred_at <= $2::timestamptz
          AND details->>'calling_ae_title' IS NOT NULL
        GROUP BY details->>'calling_ae_title'`,
      values,
    ),
  ]);
  const byTitle = new Map<string, AeTitleActivity>();
  const entry = (ae: string, at: Date) => {
    let found = byTitle.get(ae);
    if (!found) {
      const zero = (): AeCounts => ({ associations: 0, associationsRejected: 0, instancesStored: 0, instancesFailed: 0 });
      found = { callingAeTitle: ae, lastHour: zero(), lastDay: zero(), lastActivityAt: at.toISOString() };
      byTitle.set(ae, found);
    }
    if (at.toISOString() > found.lastActivityAt) found.lastActivityAt = at.toISOString();
    return found;
  };
  for (const row of stored.rows) {
    const found = entry(row.ae, row.at);
    found.lastHour.instancesStored = row.hour;
    found.lastDay.instancesStored = row.day;
  }
  for (const row of counted.rows) {
    const found = entry(row.ae, row.at);
    // Instances stored come from the index (complete since the index exists); the counters add what it cannot know.
    if (row.measure === 'association') {
      found.lastHour.associations = row.h_accepted;
      found.lastDay.associations = row.d_accepted;
    } else if (row.measure === 'instance') {
      found.lastHour.instancesFailed = row.h_errored;
      found.lastDay.instancesFailed = row.d_errored;
    }
  }
  for (const row of rejected.rows) {
    const found = entry(row.ae, row.at);
    found.lastHour.associationsRejected = row.hour;
    found.lastDay.associationsRejected = row.day;
  }
  const total = (activity: AeTitleActivity) => activity.lastDay.associations + activity.lastDay.associationsRejected + activity.lastDay.instancesStored + activity.lastDay.instancesFailed;
  return [...byTitle.values()]
    .sort((a, b) => total(b) - total(a) || a.callingAeTitle.localeCompare(b.callingAeTitle))
    .slice(0, maxSendersPerKind);
}

/** Five-minute buckets of the day before `now`, as siteActivity's series: DICOM instances and FHIR requests. */
export async function countedSeries(db: Queryable, site: SiteContext, now = new Date()): Promise<Map<string, { instances: PeriodCounts; fhirRequests: PeriodCounts }>> {
  const { rows } = await db.query<{ at: Date; i_ok: number; i_err: number; f_ok: number; f_err: number }>(
    `SELECT date_bin('5 minutes', minute, timestamptz 'epoch') AS at,
            coalesce(sum(accepted) FILTER (WHERE surface = 'dicom' AND measure = 'instance'), 0)::int AS i_ok,
            coalesce(sum(errored) FILTER (WHERE surface = 'dicom' AND measure = 'instance'), 0)::int AS i_err,
            coalesce(sum(accepted) FILTER (WHERE surface = 'fhir'), 0)::int AS f_ok,
            coalesce(sum(errored) FILTER (WHERE surface = 'fhir'), 0)::int AS f_err
       FROM traffic_minute
      WHERE site_id = $1 AND ${lastDayOfMinutes} AND (measure = 'instance' OR surface = 'fhir')
      GROUP BY 1`,
    [site.siteId, now],
  );
  return new Map(rows.map((row) => [row.at.toISOString(), { instances: { accepted: row.i_ok, errored: row.i_err }, fhirRequests: { accepted: row.f_ok, errored: row.f_err } }]));
}

/** The site's last failure of any kind: an HL7 message not accepted, a request or DICOM instance that failed. */
export async function lastErrorAt(db: Queryable, site: SiteContext): Promise<string | null> {
  const { rows } = await db.query<{ at: Date | null }>(
    `SELECT greatest(
       (SELECT max(received_at) FROM inbound_message WHERE site_id = $1 AND outcome <> 'processed'),
       (SELECT max(last_error_at) FROM traffic_minute WHERE site_id = $1)) AS at`,
    [site.siteId],
  );
  return rows[0]?.at?.toISOString() ?? null;
}
