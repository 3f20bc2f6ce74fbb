import { resolveSite } from '../../domain/sites/sites.ts';
import { DomainError } from '../../domain/errors.ts';
import { resetPassword } from '../../domain/users/password-reset.ts';
import { createUser, listUsers, parseRole, resolveUser, updateUser, type User } from '../../domain/users/users.ts';
import type { Queryable } from '../../storage/database.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { switchOf } from '../switches.ts';
import { withDatabase } from '../with-database.ts';

function present(user: User) {
  return { id: user.id, email: user.email, role: user.role, site_id: user.siteId, active: user.active };
}

/**
 * USER (id or e-mail), and with --site the site it must belong to: a user of another site is
 * "not found", as in the admin app.
 */
async function targetUser(db: Queryable, options: CommandOptions, target: string | undefined, usage: string): Promise<User> {
  if (!target) throw new UsageError(`${usage} needs the user: ${usage} USER [--site SITE]`);
  const user = await resolveUser(db, target);
  const siteOption = options.optional('site');
  if (siteOption !== undefined && user.siteId !== (await resolveSite(db, siteOption)).id) throw new DomainError('not-found', `no user with id or e-mail "${target}" in this site`);
  return user;
}

export async function userCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const role = parseRole(options.optional('role') ?? 'clinician');
    const siteOption = options.optional('site');
    if (role !== 'service-admin' && !siteOption) throw new UsageError('--site is required for a site admin or clinician');
    if (role === 'service-admin' && siteOption) throw new UsageError('a service admin belongs to no site: leave out --site');
    const { user, generatedPassword } = await withDatabase(async (db) => {
      const siteId = siteOption ? (await resolveSite(db, siteOption)).id : null;
      const password = options.optional('password');
      return createUser(db, { siteId, email: options.required('email'), role, ...(password !== undefined ? { password } : {}) }, { kind: 'operator' });
    });
    const out = { id: user.id, email: user.email, role: user.role, site_id: user.siteId, ...(generatedPassword ? { password: generatedPassword } : {}) };
    print(out, json, () => formatRecord(out) + (generatedPassword ? '\n(the generated password is shown only now)' : ''));
    return;
  }
  if (action === 'update') {
    const roleOption = options.optional('role');
    const role = roleOption !== undefined ? parseRole(roleOption) : undefined;
    const active = switchOf(options, 'reactivate', 'deactivate');
    if (role === undefined && active === undefined) throw new UsageError('user update changes --role, or --deactivate / --reactivate');
    const user = await withDatabase(async (db) => {
      const current = await targetUser(db, options, positionals[0], 'user update');
      // Deactivation ends the sessions and stops the API keys (credential change notified).
      return db.transaction((tx) => updateUser(tx, current.id, { ...(role !== undefined ? { role } : {}), ...(active !== undefined ? { active } : {}) }, { kind: 'operator' }));
    });
    const out = present(user);
    print(out, json, () => formatRecord(out));
    return;
  }
  if (action === 'password') {
    const { user, generatedPassword } = await withDatabase(async (db) => {
      const current = await targetUser(db, options, positionals[0], 'user password');
      return { user: current, ...(await db.transaction((tx) => resetPassword(tx, current.id, options.optional('password'), { kind: 'operator' }))) };
    });
    const out = { id: user.id, email: user.email, sessions_ended: true, ...(generatedPassword ? { password: generatedPassword } : {}) };
    print(out, json, () => formatRecord(out) + (generatedPassword ? '\n(the generated password is shown only now)' : ''));
    return;
  }
  const users = await withDatabase(async (db) => {
    const site = options.optional('site');
    return listUsers(db, site ? { siteId: (await resolveSite(db, site)).id } : {});
  });
  const rows = users.map(present);
  print(rows, json, () => formatTable(rows, ['id', 'email', 'role', 'site_id', 'active']));
}
