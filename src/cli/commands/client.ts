import {
  createIntegrationClient,
  listIntegrationClients,
  resolveIntegrationClient,
  updateIntegrationClient,
  type ClientInput,
} from '../../domain/clients/integration-clients.ts';
import { clientJson } from '../../domain/clients/client-json.ts';
import { resolveSite } from '../../domain/sites/sites.ts';
import { UsageError } from '../cli-error.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { formatRecord, formatTable, print } from '../output.ts';
import { switchOf } from '../switches.ts';
import { withDatabase } from '../with-database.ts';

/** The options create and update share; on update an empty value clears a setting. */
function settingsFrom(options: CommandOptions): Partial<ClientInput> {
  const settings: Partial<ClientInput> = {};
  const set = <K extends keyof ClientInput>(key: K, option: string, value: (text: string) => ClientInput[K]) => {
    const text = options.optional(option);
    if (text !== undefined) settings[key] = value(text);
  };
  set('name', 'name', (text) => text);
  set('protocol', 'protocol', (text) => text);
  set('allowedIps', 'allowed-ips', (text) => text);
  set('sendingApplication', 'sending-application', (text) => text || null);
  set('sendingFacility', 'sending-facility', (text) => text || null);
  set('defaultCharset', 'default-charset', (text) => text);
  set('timeZone', 'time-zone', (text) => text || null);
  return settings;
}

export async function clientCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'create') {
    const client = await withDatabase(async (db) => {
      const site = await resolveSite(db, options.required('site'));
      const input: ClientInput = {
        ...settingsFrom(options),
        name: options.required('name'),
        protocol: options.required('protocol'),
        allowedIps: options.required('allowed-ips'),
      };
      // The operator has the service administrator's authority to approve an overlap.
      return db.transaction((tx) => createIntegrationClient(tx, site.id, input, { kind: 'operator' }, { approveOverlap: options.flag('approve-overlap') }));
    });
    const out = clientJson(client);
    print(out, json, () => formatRecord(out));
    return;
  }
  if (action === 'update') {
    const target = positionals[0];
    if (!target) throw new UsageError('client update needs the client: client update CLIENT --site SITE [--time-zone TZ] ...');
    const client = await withDatabase(async (db) => {
      const site = await resolveSite(db, options.required('site'));
      const current = await resolveIntegrationClient(db, site.id, target);
      const enabled = switchOf(options, 'enable', 'disable');
      const settings = { ...settingsFrom(options), ...(enabled !== undefined ? { enabled } : {}) };
      return db.transaction((tx) => updateIntegrationClient(tx, site.id, current.id, settings, { kind: 'operator' }, { approveOverlap: options.flag('approve-overlap') }));
    });
    const out = clientJson(client);
    print(out, json, () => formatRecord(out));
    return;
  }
  const clients = await withDatabase(async (db) => listIntegrationClients(db, (await resolveSite(db, options.required('site'))).id));
  const rows = clients.map(clientJson);
  print(rows, json, () => formatTable(rows, ['id', 'name', 'protocol', 'allowed_ips', 'sending_application', 'sending_facility', 'time_zone', 'enabled']));
}
