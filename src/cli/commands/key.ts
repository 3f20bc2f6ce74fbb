import { createApiKey, listApiKeys, revokeApiKey } from '../../domain/keys/api-keys.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import { resolveUser } from '../../domain/users/users.ts';
import type { CommandContext } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function keyCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const { apiKey, key } = await withDatabase(async (db) => {
      const site = await resolveSite(db, options.required('site'));
      const user = await resolveUser(db, options.required('user'));
      const label = options.optional('label');
      return createApiKey(db, { siteId: site.id, userId: user.id, ...(label !== undefined ? { label } : {}) }, { kind: 'operator' });
    });
    const out = { id: apiKey.id, key, prefix: apiKey.prefix, label: apiKey.label, site_id: apiKey.siteId, user_id: apiKey.userId };
    print(out, json, () => `${formatRecord(out)}\n(store the key now: it is shown only this once)`);
    return;
  }
  if (action === 'revoke') {
    const keyId = positionals[0];
    if (!keyId) throw new UsageError('key revoke needs the key id: key revoke KEY_ID [--site SITE]');
    const siteOption = options.optional('site');
    // With --site, a key of another site is "not found", as in the admin app.
    const apiKey = await withDatabase(async (db) => revokeApiKey(db, keyId, { kind: 'operator' }, siteOption !== undefined ? { siteId: (await resolveSite(db, siteOption)).id } : {}));
    const out = { id: apiKey.id, prefix: apiKey.prefix, revoked_at: apiKey.revokedAt };
    print(out, json, () => formatRecord(out));
    return;
  }
  const keys = await withDatabase(async (db) => listApiKeys(db, (await resolveSite(db, options.required('site'))).id));
  const rows = keys.map((key) => ({ id: key.id, prefix: key.prefix, label: key.label, user: key.userEmail, created_at: key.createdAt, last_used_at: key.lastUsedAt, revoked_at: key.revokedAt }));
  print(rows, json, () => formatTable(rows, ['id', 'prefix', 'label', 'user', 'created_at', 'last_used_at', 'revoked_at']));
}
