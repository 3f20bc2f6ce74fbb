import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Provisioning through the operator CLI (DESIGN.md section 3), the way an operator sets a site
 * up: sites, users, API keys and MLLP clients. Sites are found again by name, so a cached data
 * set keeps its sites; a fresh API key is made on every bench run (a key is shown only once).
 */
export async function cli<T>(root: string, env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  try {
    const { stdout } = await run(process.execPath, ['bin/clinical-gateway.js', ...args, '--json'], {
      cwd: root,
      env: { ...env, CG_LOG_LEVEL: 'warn' },
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout) as T;
  } catch (error) {
    const failure = error as { stderr?: string; message: string };
    throw new Error(`clinical-gateway ${args.join(' ')} failed: ${failure.stderr?.trim() || failure.message}`);
  }
}

export interface ProvisionedSite {
  id: string;
  name: string;
  aeTitle: string;
  apiKey: string;
}

interface SiteRow {
  id: string;
  name: string;
  ae_title: string;
}

export async function listSites(root: string, env: NodeJS.ProcessEnv): Promise<SiteRow[]> {
  const listed = await cli<SiteRow[] | { sites: SiteRow[] }>(root, env, ['site', 'list']);
  return Array.isArray(listed) ? listed : listed.sites;
}

/** The site (created when missing) with a user and a fresh API key. */
export async function provisionSite(
  root: string,
  env: NodeJS.ProcessEnv,
  existing: SiteRow[],
  name: string,
  aeTitle: string,
): Promise<ProvisionedSite> {
  let site = existing.find((row) => row.name === name);
  const email = `bench@${name}.invalid`;
  if (!site) {
    site = await cli<SiteRow>(root, env, ['site', 'create', '--name', name, '--ae-title', aeTitle]);
    await cli(root, env, ['user', 'create', '--site', site.id, '--email', email, '--role', 'clinician']);
  }
  const key = await cli<{ key: string }>(root, env, ['key', 'create', '--site', site.id, '--user', email, '--label', 'bench']);
  return { id: site.id, name: site.name, aeTitle: site.ae_title, apiKey: key.key };
}

/** A registered MLLP sender for loopback (DESIGN.md: the client's site is the message's site). */
export async function provisionMllpClient(root: string, env: NodeJS.ProcessEnv, siteId: string): Promise<void> {
  await cli(root, env, ['client', 'create', '--site', siteId, '--name', `bench-${Date.now()}`, '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1']);
}
