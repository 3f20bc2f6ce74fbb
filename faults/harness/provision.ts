import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot, type GatewayProcess } from './gateway-process.ts';

const execFileAsync = promisify(execFile);

/**
 * Everything a scenario needs of one site, made through the operator CLI exactly as an operator
 * would (DESIGN.md section 3): the site with its AE title, a clinician, an API key and an MLLP
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

export async function cli(gateway: GatewayProcess, args: string[]): Promise<unknown> {
  try {
    const { stdout } = await execFileAsync(process.execPath, [join(repositoryRoot, 'bin/clinical-gateway.js'), ...args, '--json'], {
      cwd: repositoryRoot,
      env: gateway.env(),
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout);
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`clinical-gateway ${args.join(' ')} failed: ${(e.stderr || e.message).trim()}`);
  }
}

export async function provisionSite(gateway: GatewayProcess, label: string): Promise<ProvisionedSite> {
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const name = `Faults ${label} ${suffix}`;
  const aeTitle = `F${label.slice(0, 6).toUpperCase()}${suffix}`.slice(0, 16);
  const site = (await cli(gateway, ['site', 'create', '--name', name, '--ae-title', aeTitle, '--patient-put-creates'])) as { id: string };
  const user = (await cli(gateway, ['user', 'create', '--site', site.id, '--email', `faults-${suffix.toLowerCase()}@example.test`, '--role', 'clinician', '--password', `pw-${randomBytes(12).toString('hex')}`])) as { id: string };
  const key = (await cli(gateway, ['key', 'create', '--site', site.id, '--user', user.id, '--label', 'faults'])) as { id: string; key: string };
  const sendingApplication = `FAULTS_${suffix}`;
  const sendingFacility = `FAC_${label.toUpperCase()}`;
  const client = (await cli(gateway, [
    'client', 'create', '--site', site.id, '--name', `faults mllp ${suffix}`, '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1',
    '--sending-application', sendingApplication, '--sending-facility', sendingFacility,
  ])) as { id: string };
  return { id: site.id, name, aeTitle, apiKey: key.key, apiKeyId: key.id, userId: user.id, mllp: { clientId: client.id, sendingApplication, sendingFacility } };
}
