/**
 * Failed sign-ins and lockouts go to the log and to the audit log with the account (the e-mail
 * as typed, lower-cased) and the source address, never the password: an operator must be able to
 * see who is being guessed at and from where (HIPAA 164.308(a)(5)(ii)(C), log-in monitoring).
 * The event belongs to the account's site when the account exists, else to the service.
 */
import type { FastifyRequest } from 'fastify';
import { recordAudit } from '../../domain/audit/audit.ts';
import type { Actor } from '../../domain/site-context.ts';
import type { Queryable } from '../../storage/database.ts';
import { accountAddressFailureLimit, addressFailureLimit, throttleWindowSeconds, type SignInAttempt } from './sign-in-throttle.ts';

export type SignInEvent = 'sign-in.failed' | 'sign-in.locked-out' | 'password-change.failed';

export async function recordSignInEvent(db: Queryable, request: FastifyRequest, event: SignInEvent, attempt: SignInAttempt, actor?: Actor): Promise<void> {
  const details = { account: attempt.account, address: attempt.address };
  if (event === 'sign-in.locked-out') {
    request.log.warn({ ...details, windowSeconds: throttleWindowSeconds, limits: { accountAndAddress: accountAddressFailureLimit, address: addressFailureLimit } }, 'sign-in locked out');
  } else {
    request.log.warn(details, event === 'sign-in.failed' ? 'sign-in failed' : 'password change with a wrong current password');
  }
  const { rows } = await db.query<{ id: string; site_id: string | null }>('SELECT id, site_id FROM app_user WHERE lower(email) = $1', [attempt.account]);
  const account = rows[0];
  await recordAudit(db, {
    siteId: account?.site_id ?? null,
    actor: actor ?? { kind: 'anonymous', remoteAddress: attempt.address },
    action: event,
    targetType: 'user',
    ...(account ? { targetId: account.id } : {}),
    details,
  });
}
