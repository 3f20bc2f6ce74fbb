import { randomBytes } from 'node:crypto';
import type { Queryable } from '../../storage/database.ts';

/**
 * The HMAC key of paging tokens: made once per deployment (the first process to need it inserts
 * it; the others read the same row), then cached by the caller.
 */
export async function loadPagingSecret(db: Queryable): Promise<Buffer> {
  await db.query('INSERT INTO fhir_paging_secret (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [randomBytes(32)]);
  const { rows } = await db.query<{ secret: Buffer }>('SELECT secret FROM fhir_paging_secret WHERE id = 1');
  return rows[0]!.secret;
}
