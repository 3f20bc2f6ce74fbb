/**
 * Domain objects as the admin API spells them (snake_case, like the CLI's JSON output). Those the
 * CLI prints too live with their subject in the domain (siteJson, clientJson).
 */
import type { ApiKey } from '../../domain/keys/api-keys.ts';
import type { User } from '../../domain/users/users.ts';

export function userView(user: User) {
  return { id: user.id, site_id: user.siteId, email: user.email, role: user.role, active: user.active, created_at: user.createdAt, updated_at: user.updatedAt };
}

export function apiKeyView(key: ApiKey & { userEmail?: string }) {
  return {
    id: key.id,
    prefix: key.prefix,
    label: key.label,
    user_id: key.userId,
    ...(key.userEmail !== undefined ? { user_email: key.userEmail } : {}),
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
  };
}
