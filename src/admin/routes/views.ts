/** Domain objects as the admin API spells them (snake_case, like the CLI's JSON output). */
import type { IntegrationClient } from '../../domain/clients/integration-clients.ts';
import type { ApiKey } from '../../domain/keys/api-keys.ts';
import type { Site } from '../../domain/sites/sites.ts';
import type { User } from '../../domain/users/users.ts';

export function siteView(site: Site) {
  return {
    id: site.id,
    name: site.name,
    ae_title: site.aeTitle,
    patient_put_creates: site.policies.patientPutCreates,
    mllp_allow_any_ip: site.policies.mllpAllowAnyIp,
    time_zone: site.timeZone,
    data_access_retention_days: site.dataAccessRetentionDays,
    message_body_retention_days: site.messageBodyRetentionDays,
    created_at: site.createdAt,
    updated_at: site.updatedAt,
  };
}

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

export function clientView(client: IntegrationClient) {
  return {
    id: client.id,
    name: client.name,
    protocol: client.protocol,
    allowed_ips: client.allowedIps,
    sending_application: client.sendingApplication,
    sending_facility: client.sendingFacility,
    default_charset: client.defaultCharset,
    time_zone: client.timeZone,
    enabled: client.enabled,
    created_at: client.createdAt,
    updated_at: client.updatedAt,
  };
}
