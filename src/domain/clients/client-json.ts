import type { IntegrationClient } from './integration-clients.ts';

/** An integration client as the operator sees it, in the admin API's and the CLI's JSON (snake_case). */
export function clientJson(client: IntegrationClient) {
  return {
    id: client.id,
    site_id: client.siteId,
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
