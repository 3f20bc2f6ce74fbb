/** Records an HTTP request refused for an unknown or revoked API key (by prefix, never the secret). */
import { refusedKeyOrigin } from '../keys/api-keys.ts';
import type { Queryable } from '../../storage/database.ts';
import { recordRefused } from './recorder.ts';

export async function recordRefusedKey(
  db: Queryable,
  request: { ip: string; method: string; url: string },
  presented: string | undefined,
  reason: 'unknown' | 'revoked',
  origin: string,
): Promise<void> {
  const key = await refusedKeyOrigin(db, presented).catch(() => undefined);
  if (!key) return;
  recordRefused(db, {
    siteId: key.siteId ?? null,
    surface: 'http',
    kind: reason === 'revoked' ? 'http-api-key-revoked' : 'http-api-key-unknown',
    remoteAddress: request.ip,
    reason: reason === 'revoked' ? 'the API key has been revoked' : 'the API key is not valid',
    details: { key_prefix: key.keyPrefix, origin, request: `${request.method} ${request.url.split('?')[0]!.slice(0, 200)}` },
  });
}
