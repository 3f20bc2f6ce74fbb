import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createSite, listSites } from '../../src/domain/sites/sites.ts';
import { Database } from '../../src/storage/database.ts';

const run = promisify(execFile);

/**
 * Provisioning the way an operator does it, through the CLI (DESIGN.md section 3): the sites
 * the load runs as, their users and API keys, and the MLLP client. Sites that only need to exist
 * (the other sites of the data set, one site per DICOM run) are made with the same domain
 * function the CLI calls, in-process: a CLI process per site costs seconds on a busy machine.
 * Sites are found again by name, so a cached data set keeps its sites; a fresh API key is made
 * on every bench run (a key is shown only once).
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

export interface SiteRow {
  id: string;
  name: string;
  aeTitle: string;
}

async function withDatabase<T>(databaseUrl: string, work: (database: Database) => Promise<T>): Promise<T> {
  const database = new Database({ connectionString: databaseUrl, maxConnections: 2, applicationName: 'clinical-gateway-bench' });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

export async function existingSites(databaseUrl: string): Promise<SiteRow[]> {
  return withDatabase(databaseUrl, async (database) => (await listSites(database)).map((site) => ({ id: site.id, name: site.name, aeTitle: site.aeTitle })));
}

/** Sites that need no credentials, made when missing. */
export async function ensureSites(databaseUrl: string, existing: SiteRow[], wanted: { name: string; aeTitle: string }[]): Promise<SiteRow[]> {
  return withDatabase(databaseUrl, async (database) => {
    const sites: SiteRow[] = [];
    for (const { name, aeTitle } of wanted) {
      const found = existing.find((row) => row.name === name);
      if (found) sites.push(found);
      else {
        const site = await createSite(database, { name, aeTitle }, { kind: 'operator' });
        sites.push({ id: site.id, name: site.name, aeTitle: site.aeTitle });
      }
    }
    return sites;
  });
}

/** A site (created when missing) with a clinician user and a fresh API key, all through the CLI. */
export async function provisionSite(root: string, env: NodeJS.ProcessEnv, existing: SiteRow[], name: string, aeTitle: string): Promise<ProvisionedSite> {
  let site = existing.find((row) => row.name === name);
  const email = `bench@${name}.invalid`;
  if (!site) {
    const created = await cli<{ id: string; name: string; ae_title: string }>(root, env, ['site', 'create', '--name', name, '--ae-title', aeTitle]);
    site = { id: created.id, name: created.name, aeTitle: created.ae_title };
    await cli(root, env, ['user', 'create', '--site', site.id, '--email', email, '--role', 'clinician']);
  }
  const key = await cli<{ key: string }>(root, env, ['key', 'create', '--site', site.id, '--user', email, '--label', 'bench']);
  return { ...site, apiKey: key.key };
}

/** A site with a registered MLLP sender for loopback (DESIGN.md: the client's site is the message's site). */
export async function provisionMllpSite(root: string, env: NodeJS.ProcessEnv, name: string, aeTitle: string): Promise<string> {
  const site = await cli<{ id: string }>(root, env, ['site', 'create', '--name', name, '--ae-title', aeTitle]);
  await cli(root, env, ['client', 'create', '--site', site.id, '--name', 'bench', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1']);
  return site.id;
}
