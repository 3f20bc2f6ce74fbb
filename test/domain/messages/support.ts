import type { Queryable } from '../../../src/storage/database.ts';

/**
 * 288 messages of a site, one every five minutes back from `now` (i = 0 .. 287): every tenth
 * errored (AE), i = 5, 55, ... 255 refused, the rest accepted; LIS over MLLP for even
 * i, RIS over HTTP for odd.
 */
export async function seedRecentTraffic(db: Queryable, siteId: string, now: Date): Promise<void> {
  await db.query(
    `INSERT INTO inbound_message (site_id, id, protocol, transport, sending_application, sending_facility, control_id, message_type,
            outcome, ack_code, ack_text, raw, received_at)
     SELECT $1, gen_random_uuid(), 'hl7v2', CASE WHEN i % 2 = 0 THEN 'mllp' ELSE 'http' END, CASE WHEN i % 2 = 0 THEN 'LIS' ELSE 'RIS' END, 'MAIN',
            'A' || i, 'ORU^R01',
            CASE WHEN i % 10 = 0 THEN 'error' WHEN i % 50 = 5 THEN 'refused' ELSE 'processed' END,
            CASE WHEN i % 10 = 0 THEN 'AE' WHEN i % 50 = 5 THEN 'AR' ELSE 'AA' END, '', '\\x00', $2::timestamptz - i * interval '5 minutes'
       FROM generate_series(0, 287) AS i`,
    [siteId, now],
  );
}
