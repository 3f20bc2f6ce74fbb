import { createIntegrationClient, listIntegrationClients, type IntegrationClient } from '../../domain/clients/integration-clients.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import type { CommandContext } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

function present(client: IntegrationClient) {
  return {
    id: client.id,
    site_id: client.siteId,
    name: client.name,
    protocol: client.protocol,
    allowed_ips: client.allowedIps,
    sending_application: client.sendingApplication,
    sending_facility: client.sendingFacility,
    default_charset: client.defaultCharset,
    enabled: client.enabled,
  };
}

export async function clientCommand({ action, options, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const client = await withDatabase(async (db) => {
      const site = await resolveSite(db, options.required('site'));
      const charset = options.optional('default-charset');
      return createIntegrationClient(
        db,
        site.id,
        {
          name: options.required('name'),
          protocol: options.required('protocol'),
          allowedIps: options.required('allowed-ips'),
          sendingApplication: options.optional('sending-application') ?? null,
          sendingFacility: options.optional('sending-facility') ?? null,
          ...(charset !== undefined ? { defaultCharset: charset } : {}),
        },
        { kind: 'operator' },
      );
    });
    const out = present(client);
    print(out, json, () => formatRecord(out));
    return;
  }
  const clients = await withDatabase(async (db) => listIntegrationClients(db, (await resolveSite(db, options.required('site'))).id));
  const rows = clients.map(present);
  print(rows, json, () => formatTable(rows, ['id', 'name', 'protocol', 'allowed_ips', 'sending_application', 'sending_facility', 'enabled']));
}
