import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../src/storage/database.ts';
import type { Actor, SiteContext } from '../../src/domain/site-context.ts';

/** A fresh site per test keeps tests independent without truncating tables. */
export async function createTestSite(
  db: Queryable,
  options: { name?: string; aeTitle?: string; patientPutCreates?: boolean; mllpAllowAnyIp?: boolean; timeZone?: string; actor?: Actor } = {},
): Promise<SiteContext> {
  const id = randomUUID();
  const name = options.name ?? `Test site ${id.slice(0, 8)}`;
  const aeTitle = options.aeTitle ?? `T${id.replace(/-/g, '').slice(0, 15).toUpperCase()}`;
  await db.query(
    'INSERT INTO site (id, name, ae_title, patient_put_creates, mllp_allow_any_ip, time_zone) VALUES ($1, $2, $3, $4, $5, $6)',
    [id, name, aeTitle, options.patientPutCreates ?? false, options.mllpAllowAnyIp ?? false, options.timeZone ?? null],
  );
  return {
    siteId: id,
    siteName: name,
    aeTitle,
    policies: { patientPutCreates: options.patientPutCreates ?? false, mllpAllowAnyIp: options.mllpAllowAnyIp ?? false },
    timeZone: options.timeZone ?? null,
    actor: options.actor ?? { kind: 'operator' },
  };
}
