import { randomBytes } from 'node:crypto';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { createApiKey } from '../../src/domain/keys/api-keys.ts';
import { createSite } from '../../src/domain/sites/sites.ts';
import { createUser } from '../../src/domain/users/users.ts';
import { Database } from '../../src/storage/database.ts';
import { migrate } from '../../src/storage/migrations.ts';
import type { GatewayProcess } from './gateway-process.ts';

/**
 * Everything a scenario needs of one site: the site with its AE title, a clinician, an API key and an MLLP
 * integration client bound to loopback and to a sending application/facility.
 */
export interface ProvisionedSite {
  id: string;
  name: string;
  aeTitle: string;
  apiKey: string;
  apiKeyId: string;
  userId: string;
  mllp: { clientId: string; sendingApplication: string; sendingFacility: string };
}

/**
 * Provisions through the domain functions the CLI itself calls (src/cli/commands/*), in-process:
 * four CLI processes per site cost a minute on a busy machine, and the campaign is about faults,
 * not about the CLI (which has its own tests). The schema is migrated first, as `serve` would.
 */
export async function provisionSite(gateway: GatewayProcess, label: string): Promise<ProvisionedSite> {
  const database = new Database({ connectionString: gateway.databaseUrl, maxConnections: 2 });
  try {
    await migrate(database);
    const suffix = randomBytes(4).toString('hex').toUpperCase();
    const name = `Faults ${label} ${suffix}`;
    const aeTitle = `F${label.slice(0, 6).toUpperCase()}${suffix}`.slice(0, 16);
    const operator = { kind: 'operator' as const };
    const site = await createSite(database, { name, aeTitle, patientPutCreates: true, mllpAllowAnyIp: false }, operator);
    const { user } = await createUser(database, { siteId: site.id, email: `faults-${suffix.toLowerCase()}@example.test`, role: 'clinician', password: `pw-${randomBytes(12).toString('hex')}` }, operator);
    const { apiKey, key } = await createApiKey(database, { siteId: site.id, userId: user.id, label: 'faults' }, operator);
    const sendingApplication = `FAULTS_${suffix}`;
    const sendingFacility = `FAC_${label.toUpperCase()}`;
    const client = await createIntegrationClient(database, site.id, { name: `faults mllp ${suffix}`, protocol: 'hl7-mllp', allowedIps: '127.0.0.1', sendingApplication, sendingFacility }, operator);
    return { id: site.id, name, aeTitle, apiKey: key, apiKeyId: apiKey.id, userId: user.id, mllp: { clientId: client.id, sendingApplication, sendingFacility } };
  } finally {
    await database.close();
  }
}
