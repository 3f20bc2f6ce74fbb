import { resolveSite } from '../../domain/sites/sites.ts';
import { createUser, listUsers, parseRole } from '../../domain/users/users.ts';
import type { CommandContext } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function userCommand({ action, options, json }: CommandContext): Promise<void> {
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
  const users = await withDatabase(async (db) => {
    const site = options.optional('site');
    return listUsers(db, site ? { siteId: (await resolveSite(db, site)).id } : {});
  });
  const rows = users.map((user) => ({ id: user.id, email: user.email, role: user.role, site_id: user.siteId, active: user.active }));
  print(rows, json, () => formatTable(rows, ['id', 'email', 'role', 'site_id', 'active']));
}
