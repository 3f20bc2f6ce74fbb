/**
 * Read-only DICOMweb tokens for the image viewer of the administration app: the admin origin
 * issues one to a signed-in user who may see a site, and the DICOMweb origin accepts it as
 * `Authorization: Bearer` (RFC 6750) for QIDO-RS and WADO-RS of that site only. A token is 256
 * random bits, stored only as its SHA-256 (with that much entropy a slow hash adds nothing), lives
 * a few minutes, and dies with the admin session that asked for it: at once when the session is
 * deleted (ON DELETE CASCADE), and as soon as the session is past its absolute end or its idle
 * limit (the session's own rule, session-liveness.ts), whether or not its row is deleted yet.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../../storage/database.ts';
import { siteColumns, toSite, type Site, type SiteRow } from '../sites/sites.ts';
import { liveSessionCondition } from '../users/session-liveness.ts';

/** Long enough to read a series; the viewer asks for a new one before this runs out. */
export const viewingTokenSeconds = 10 * 60;

const tokenPattern = /^cgv_([A-Za-z0-9_-]{43})$/;

function hashToken(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export interface IssuedViewingToken {
  token: string;
  expiresAt: Date;
}

/**
 * A token for `siteId`, owned by the session `sessionIdHash` of `userId`. The caller has checked
 * that the user may see the site; the DICOMweb origin checks it again on every use.
 */
export async function issueViewingToken(db: Queryable, input: { sessionIdHash: Buffer; userId: string; siteId: string }): Promise<IssuedViewingToken> {
  const secret = randomBytes(32).toString('base64url');
  const { rows } = await db.query<{ expires_at: Date }>(
    `INSERT INTO dicomweb_viewing_token (token_hash, session_id_hash, user_id, site_id, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5)) RETURNING expires_at`,
    [hashToken(secret), input.sessionIdHash, input.userId, input.siteId, viewingTokenSeconds],
  );
  // Expired tokens are deleted opportunistically; nothing depends on their removal.
  await db.query('DELETE FROM dicomweb_viewing_token WHERE expires_at < now()');
  return { token: `cgv_${secret}`, expiresAt: rows[0]!.expires_at };
}

export type ViewingTokenCheck =
  | { ok: true; site: Site; userId: string }
  | { ok: false; reason: 'malformed' | 'unknown' };

/**
 * The site and user of a presented token, if it is live: not expired, its session live (neither
 * past its absolute end nor idle past `sessionIdleSeconds`), its user active and still allowed to
 * see the site (a service administrator, or a user of that site). Reading images does not count
 * as activity of the session: the admin app's own requests do.
 */
export async function authenticateViewingToken(db: Queryable, presented: string, sessionIdleSeconds: number): Promise<ViewingTokenCheck> {
  const match = tokenPattern.exec(presented.trim());
  if (!match) return { ok: false, reason: 'malformed' };
  const presentedHash = hashToken(match[1]!);
  const { rows } = await db.query<SiteRow & { token_hash: Buffer; user_id: string }>(
    `SELECT t.token_hash, t.user_id, ${siteColumns('s')}
     FROM dicomweb_viewing_token t
     JOIN admin_session a ON a.id_hash = t.session_id_hash
     JOIN app_user u ON u.id = t.user_id
     JOIN site s ON s.id = t.site_id
     WHERE t.token_hash = $1 AND t.expires_at > now() AND ${liveSessionCondition('a', '$2')} AND u.active
       AND (u.role = 'service-admin' OR u.site_id = t.site_id)`,
    [presentedHash, sessionIdleSeconds],
  );
  const row = rows[0];
  // The row was found by its hash; comparing again in constant time keeps the check itself free
  // of early exits whatever the index did (the hash of 256 random bits reveals nothing anyway).
  const storedHash = row?.token_hash ?? Buffer.alloc(presentedHash.length);
  if (!timingSafeEqual(presentedHash, storedHash) || !row) return { ok: false, reason: 'unknown' };
  return { ok: true, site: toSite(row), userId: row.user_id };
}
