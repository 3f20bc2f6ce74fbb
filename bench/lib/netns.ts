import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Neither Orthanc 1.10 nor dcmtk's storescp can bind their DICOM port to one address: they listen
 * on every interface. So each runs in a network namespace of its own (unshare -n) where only
 * the loopback interface exists, and the load generator joins that namespace (nsenter --net).
 * Loopback in a namespace is the same kernel path as in the host's, so the figures compare.
 */
export function privateNetworkAvailable(): boolean {
  return spawnSync('unshare', ['-n', 'true']).status === 0 && spawnSync('nsenter', ['--version']).status === 0;
}

/** command/args that start `command` alone in a new network namespace with loopback up. */
export function inPrivateNetwork(command: string, args: string[]): { command: string; args: string[] } {
  return { command: 'unshare', args: ['-n', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"', command, ...args] };
}

/** command/args that run `command` inside the network namespace of process `pid`. */
export function inNetworkOf(pid: number | undefined, command: string, args: string[]): { command: string; args: string[] } {
  return pid === undefined ? { command, args } : { command: 'nsenter', args: [`--net=/proc/${pid}/ns/net`, command, ...args] };
}

export async function runIn(pid: number | undefined, command: string, args: string[]): Promise<string> {
  const spec = inNetworkOf(pid, command, args);
  const { stdout } = await run(spec.command, spec.args, { encoding: 'utf8', timeout: 10_000 });
  return stdout;
}
