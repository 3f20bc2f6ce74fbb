/**
 * Server-side sessions of the administration app (OWASP Session Management Cheat Sheet): the
 * session id is 256 random bits, sent only in an HttpOnly cookie and stored only as its SHA-256;
 * a session ends after an idle limit or an absolute limit, on sign-out, when its user is
 * deactivated, and (all other sessions of the user) when the user changes their password.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../../storage/database.ts';
import type { User, UserRole } from '../../domain/users/users.ts';
import { liveSessionCondition } from '../../domain/users/session-liveness.ts';

/**
 * The idle limit (a forgotten browser tab on a ward computer signs itself out) is the
 * configuration's, CG_ADMIN_SESSION_IDLE_SECONDS, 30 minutes by default.
 */
/** Absolute limit: one working shift. */
export const sessionAbsoluteSeconds = 12 * 60 * 60;

/**
 * last_seen_at is written at most this often, not on every request: a minute, or a tenth of a
 * short idle limit, so that a session in use never ends for want of a write.
 */
export function touchIntervalSeconds(idleSeconds: number): number {
  return Math.max(1, Math.min(60, Math.floor(idleSeconds / 10)));
}

/**
 * How long before the idle limit the app warns: two minutes (a third of a short limit), plus the
 * touch interval, because the server may have recorded the last request up to that much earlier
 * than the browser saw it.
 */
export function idleWarningSeconds(idleSeconds: number): number {
  return Math.min(120, Math.floor(idleSeconds / 3)) + touchIntervalSeconds(idleSeconds);
}

const sessionIdPattern = /^[A-Za-z0-9_-]{43}$/;

export interface SessionUser {
  id: string;
  siteId: string | null;
  email: string;
  role: UserRole;
}

export interface ActiveSession {
  idHash: Buffer;
  user: SessionUser;
  expiresAt: Date;
}

export function hashSessionId(sessionId: string): Buffer {
  return createHash('sha256').update(sessionId).digest();
}

/** Starts a session for a user who has just proven their password; returns the cookie value. */
export async function createSession(
  db: Queryable,
  user: User,
  client: { remoteAddress?: string; userAgent?: string },
  idleSeconds: number,
): Promise<{ sessionId: string; expiresAt: Date }> {
  const sessionId = randomBytes(32).toString('base64url');
  const { rows } = await db.query<{ expires_at: Date }>(
    `INSERT INTO admin_session (id_hash, user_id, expires_at, remote_address, user_agent)
     VALUES ($1, $2, now() + make_interval(secs => $3), $4, $5) RETURNING expires_at`,
    [hashSessionId(sessionId), user.id, sessionAbsoluteSeconds, client.remoteAddress ?? null, client.userAgent?.slice(0, 300) ?? null],
  );
  // Expired sessions are deleted opportunistically; nothing depends on their removal.
  await db.query('DELETE FROM admin_session WHERE expires_at < now() OR last_seen_at < now() - make_interval(secs => $1)', [idleSeconds]);
  return { sessionId, expiresAt: rows[0]!.expires_at };
}

/**
 * The live session for a cookie value, with its user as the database has it now (role and
 * activity are read on every request, so a role change or deactivation applies at once).
 */
export async function findSession(db: Queryable, sessionId: string | undefined, idleSeconds: number): Promise<ActiveSession | undefined> {
  if (!sessionId || !sessionIdPattern.test(sessionId)) return undefined;
  const idHash = hashSessionId(sessionId);
  const { rows } = await db.query<{
    user_id: string; site_id: string | null; email: string; role: UserRole; expires_at: Date; stale: boolean;
  }>(
    `SELECT s.user_id, u.site_id, u.email, u.role, s.expires_at,
            s.last_seen_at < now() - make_interval(secs => $3) AS stale
     FROM admin_session s JOIN app_user u ON u.id = s.user_id
     WHERE s.id_hash = $1 AND u.active AND ${liveSessionCondition('s', '$2')}`,
    [idHash, idleSeconds, touchIntervalSeconds(idleSeconds)],
  );
  const row = rows[0];
  if (!row) return undefined;
  if (row.stale) await db.query('UPDATE admin_session SET last_seen_at = now() WHERE id_hash = $1', [idHash]);
  return { idHash, user: { id: row.user_id, siteId: row.site_id, email: row.email, role: row.role }, expiresAt: row.expires_at };
}

/** The user asked to stay signed in: the idle limit counts from now. */
export async function touchSession(db: Queryable, idHash: Buffer): Promise<void> {
  await db.query('UPDATE admin_session SET last_seen_at = now() WHERE id_hash = $1', [idHash]);
}

export async function deleteSession(db: Queryable, idHash: Buffer): Promise<void> {
  await db.query('DELETE FROM admin_session WHERE id_hash = $1', [idHash]);
}

/** Ends every session of a user except, optionally, the one making the change. */
export { endUserSessions as deleteUserSessions } from '../../domain/users/password-reset.ts';
