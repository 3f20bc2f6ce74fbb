import type { Queryable } from '../../storage/database.ts';
import type { Actor } from '../site-context.ts';
import { generatePassword } from './password.ts';
import { setPassword } from './users.ts';

/**
 * An administrator's password reset (admin app and CLI alike): the given password, or a
 * generated one returned once; the user's sessions end, except the one making the change when it
 * is their own. Run inside a transaction so that both happen or neither.
 */
export async function resetPassword(
  db: Queryable,
  userId: string,
  password: string | undefined,
  actor: Actor,
  options: { keepSessionHash?: Buffer } = {},
): Promise<{ generatedPassword?: string }> {
  const generated = password ? undefined : generatePassword();
  await setPassword(db, userId, password || generated!, actor);
  await endUserSessions(db, userId, options.keepSessionHash);
  return generated ? { generatedPassword: generated } : {};
}

/** Ends every admin app session of a user except, optionally, the one making the change. */
export async function endUserSessions(db: Queryable, userId: string, except?: Buffer): Promise<void> {
  await db.query('DELETE FROM admin_session WHERE user_id = $1 AND ($2::bytea IS NULL OR id_hash <> $2)', [userId, except ?? null]);
}
