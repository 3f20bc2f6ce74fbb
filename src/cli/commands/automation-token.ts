import { createAutomationToken, listAutomationTokens, parseExpiry, revokeAutomationToken, type AutomationToken } from '../../domain/keys/automation-tokens.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

function present(token: AutomationToken) {
  return { id: token.id, prefix: token.prefix, label: token.label, created_at: token.createdAt, expires_at: token.expiresAt, last_used_at: token.lastUsedAt, revoked_at: token.revokedAt };
}

export async function automationTokenCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const label = options.optional('label');
    const expires = options.optional('expires');
    const expiresAt = expires ? parseExpiry(expires) : null;
    const { token, secret } = await withDatabase((db) => db.transaction((tx) => createAutomationToken(tx, { ...(label !== undefined ? { label } : {}), expiresAt }, { kind: 'operator' })));
    const out = { ...present(token), token: secret };
    print(out, json, () => `${formatRecord(out)}\n(store the token now: it is shown only this once)`);
    return;
  }
  if (action === 'revoke') {
    const target = positionals[0];
    if (!target) throw new UsageError('automation-token revoke needs the token\'s id or prefix: automation-token revoke TOKEN');
    const token = await withDatabase((db) => db.transaction((tx) => revokeAutomationToken(tx, target, { kind: 'operator' })));
    const out = present(token);
    print(out, json, () => formatRecord(out));
    return;
  }
  const rows = (await withDatabase((db) => listAutomationTokens(db))).map(present);
  print(rows, json, () => formatTable(rows, ['id', 'prefix', 'label', 'created_at', 'expires_at', 'last_used_at', 'revoked_at']));
}
