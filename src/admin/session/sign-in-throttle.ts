/**
 * Sign-in rate limiting (OWASP Authentication Cheat Sheet, "Protect against automated attacks";
 * NIST SP 800-63B 5.2.2). Every attempt is counted before its password is checked, in one atomic
 * statement, so a burst of concurrent guesses cannot all pass the check before any is counted.
 * Counters run in fixed windows:
 *   - per account and address together: 5 attempts; a stranger's guesses lock only the
 *     stranger's address out of that account, never the owner at their own address;
 *   - per address, across accounts: 20 attempts (spraying one password over many accounts);
 *   - per account, across addresses: 100 attempts (guessing from many addresses), except from an
 *     address the account signed in from in the last 90 days.
 * A successful sign-in takes its own attempt back off the counters and clears the
 * account-and-address counter, so only failures accumulate.
 */
import type { Queryable } from '../../storage/database.ts';

export const throttleWindowSeconds = 15 * 60;
/** Guessing one account's password from one address. */
export const accountAddressFailureLimit = 5;
/** Spraying many accounts from one address. */
export const addressFailureLimit = 20;
/** Guessing one account's password from many addresses. */
export const accountFailureLimit = 100;
/** How long an address the account signed in from stays exempt from the account-wide limit. */
export const knownAddressDays = 90;

export interface SignInAttempt {
  account: string;
  address: string;
}

export function signInAttempt(email: string, remoteAddress: string): SignInAttempt {
  return { account: email.trim().toLowerCase().slice(0, 320), address: remoteAddress };
}

const pairSubject = (attempt: SignInAttempt) => `${attempt.account} ${attempt.address}`;

export interface AttemptDecision {
  /** Seconds until this account may be tried again from this address; 0 when allowed now. */
  blockedFor: number;
  /** This attempt is the one that crossed a limit (log and audit the lockout once). */
  lockedOutNow: boolean;
}

/** Counts the attempt and decides whether its password may be checked. */
export async function countSignInAttempt(db: Queryable, attempt: SignInAttempt): Promise<AttemptDecision> {
  const { rows } = await db.query<{ scope: string; failures: number; retry_after: number; known: boolean }>(
    `WITH known AS (
       SELECT EXISTS (SELECT 1 FROM admin_sign_in_throttle WHERE scope = 'known-address' AND subject = $3
                        AND window_started_at > now() - make_interval(days => $5)) AS known
     ), counted AS (
       INSERT INTO admin_sign_in_throttle AS t (scope, subject, window_started_at, failures)
       VALUES ('account-address', $3, now(), 1), ('address', $2, now(), 1), ('account', $1, now(), 1)
       ON CONFLICT (scope, subject) DO UPDATE SET
         failures = CASE WHEN t.window_started_at > now() - make_interval(secs => $4) THEN t.failures + 1 ELSE 1 END,
         window_started_at = CASE WHEN t.window_started_at > now() - make_interval(secs => $4) THEN t.window_started_at ELSE now() END
       RETURNING scope, failures, ceil(extract(epoch FROM window_started_at + make_interval(secs => $4) - now()))::int AS retry_after
     )
     SELECT counted.*, known.known FROM counted, known`,
    [attempt.account, attempt.address, pairSubject(attempt), throttleWindowSeconds, knownAddressDays],
  );
  const limits: Record<string, number> = { 'account-address': accountAddressFailureLimit, address: addressFailureLimit, account: accountFailureLimit };
  let blockedFor = 0;
  let lockedOutNow = false;
  for (const row of rows) {
    if (row.scope === 'account' && row.known) continue;
    const limit = limits[row.scope]!;
    if (row.failures > limit) {
      blockedFor = Math.max(blockedFor, row.retry_after, 1);
      if (row.failures === limit + 1) lockedOutNow = true;
    }
  }
  return { blockedFor, lockedOutNow };
}

/** The password was right: the attempt was not a failure, and the address becomes known. */
export async function recordSignInSuccess(db: Queryable, attempt: SignInAttempt): Promise<void> {
  await db.query(
    `WITH cleared AS (
       DELETE FROM admin_sign_in_throttle WHERE scope = 'account-address' AND subject = $3
     ), uncounted AS (
       UPDATE admin_sign_in_throttle SET failures = greatest(failures - 1, 0)
        WHERE (scope = 'address' AND subject = $2) OR (scope = 'account' AND subject = $1)
     )
     INSERT INTO admin_sign_in_throttle (scope, subject, window_started_at, failures) VALUES ('known-address', $3, now(), 0)
     ON CONFLICT (scope, subject) DO UPDATE SET window_started_at = now()`,
    [attempt.account, attempt.address, pairSubject(attempt)],
  );
}

/** Bounded: rows of ended windows (and addresses not used for long) are dropped now and then. */
export async function forgetEndedWindows(db: Queryable): Promise<void> {
  await db.query(
    `DELETE FROM admin_sign_in_throttle
      WHERE (scope <> 'known-address' AND window_started_at < now() - make_interval(secs => $1))
         OR (scope = 'known-address' AND window_started_at < now() - make_interval(days => $2))`,
    [throttleWindowSeconds * 2, knownAddressDays],
  );
}
