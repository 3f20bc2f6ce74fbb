import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startChild, type RunningChild } from '../lib/child.ts';
import { inPrivateNetwork, runIn } from '../lib/netns.ts';
import { baselinePorts, benchHost } from '../lib/ports.ts';

/**
 * dcmtk's storescp as the floor of C-STORE on this machine: it writes each instance to a file
 * and answers, with no index and no fsync. One process (no --fork), in its own network
 * namespace with only loopback, since it cannot bind one address.
 */
export const storescpAet = 'STORESCP';

export interface RunningStorescp extends RunningChild {
  countInstances(): Promise<number>;
}

export async function startStorescp(workDir: string): Promise<RunningStorescp> {
  const dir = join(workDir, 'storescp');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'out'), { recursive: true });
  const spec = inPrivateNetwork('storescp', ['--aetitle', storescpAet, '--output-directory', join(dir, 'out'), String(baselinePorts.storescp)]);
  let pid: number | undefined;
  const child = await startChild({
    command: spec.command,
    args: spec.args,
    env: { ...process.env, TCP_NODELAY: '1' },
    logFile: join(dir, 'storescp.log'),
    onSpawn: (spawned) => (pid = spawned),
    ready: async () => {
      await runIn(pid, 'echoscu', ['-aet', 'BENCHSCU', '-aec', storescpAet, benchHost, String(baselinePorts.storescp)]);
      return true;
    },
  });
  return { ...child, countInstances: async () => readdirSync(join(dir, 'out')).length };
}
