/**
 * Sign-in rate limiting (OWASP Authentication Cheat Sheet, "Protect against automated attacks"):
 * failed attempts are counted per account and per client address in fixed windows; over the
 * limit, sign-in is refused with 429 and Retry-After until the window ends, even with the right
 * password. A successful sign-in clears the account's counter.
 */
import type { Queryable } from '../../storage/database.ts';

export const throttleWindowSeconds = 15 * 60;
/** Guessing one account's password: 5 tries per window. */
export const accountFailureLimit = 5;
/** Spraying many accounts from one address: 20 tries per window. */
export const addressFailureLimit = 20;

export type ThrottleSubject = { scope: 'account' | 'address'; subject: string };

export function throttleSubjects(email: string, remoteAddress: string): ThrottleSubject[] {
  return [
    { scope: 'account', subject: email.trim().toLowerCase().slice(0, 320) },
    { scope: 'address', subject: remoteAddress },
  ];
}

/** Seconds until sign-in is allowed again, or 0 when it is allowed now. */
export async function signInBlockedFor(db: Queryable, subjects: ThrottleSubject[]): Promise<number> {
  const { rows } = await db.query<{ retry_after: number }>(
    `SELECT ceil(extract(epoch FROM window_started_at + make_interval(secs => $3) - now()))::int AS retry_after
     FROM admin_sign_in_throttle
     WHERE ((scope = 'account' AND subject = $1 AND failures >= $4) OR (scope = 'address' AND subject = $2 AND failures >= $5))
       AND window_started_at > now() - make_interval(secs => $3)`,
    [subjectOf(subjects, 'account'), subjectOf(subjects, 'address'), throttleWindowSeconds, accountFailureLimit, addressFailureLimit],
  );
  return rows.reduce((longest, row) => Math.max(longest, row.retry_after, 1), 0);
}

export async function recordSignInFailure(db: Queryable, subjects: ThrottleSubject[]): Promise<void> {
  for (const { scope, subject } of subjects) {
    // A window that has ended starts again at this failure.
    await db.query(
      `INSERT INTO admin_sign_in_throttle (scope, subject, window_started_at, failures) VALUES ($1, $2, now(), 1)
       ON CONFLICT (scope, subject) DO UPDATE SET
         failures = CASE WHEN admin_sign_in_throttle.window_started_at > now() - make_interval(secs => $3)
                         THEN admin_sign_in_throttle.failures + 1 ELSE 1 END,
         window_started_at = CASE WHEN admin_sign_in_throttle.window_started_at > now() - make_interval(secs => $3)
                         THEN admin_sign_in_throttle.window_started_at ELSE now() END`,
      [scope, subject, throttleWindowSeconds],
    );
  }
  // Bounded: rows of ended windows are dropped as new failures arrive.
  await db.query('DELETE FROM admin_sign_in_throttle WHERE window_started_at < now() - make_interval(secs => $1)', [throttleWindowSeconds * 2]);
}

export async function clearAccountFailures(db: Queryable, subjects: ThrottleSubject[]): Promise<void> {
  await db.query(`DELETE FROM admin_sign_in_throttle WHERE scope = 'account' AND subject = $1`, [subjectOf(subjects, 'account')]);
}

function subjectOf(subjects: ThrottleSubject[], scope: ThrottleSubject['scope']): string {
  return subjects.find((s) => s.scope === scope)?.subject ?? '';
}
