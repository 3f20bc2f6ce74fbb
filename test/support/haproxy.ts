import { portVariables } from '../../src/config/env.ts';
import { spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { repositoryRoot } from './markdown.ts';

/**
 * HAProxy (the Debian package) run on loopback with the repository's own configuration,
 * deploy/haproxy/haproxy.cfg, in front of two service nodes: what an operator runs, with the
 * addresses and ports given through the environment variables the file reads.
 */
export const haproxyConfig = join(repositoryRoot, 'deploy/haproxy/haproxy.cfg');
export const nodeStateScript = join(repositoryRoot, 'deploy/haproxy/node-state.sh');
const haproxyBinary = '/usr/sbin/haproxy';

export type Surface = 'fhir' | 'hl7' | 'mpps' | 'connectivity' | 'admin' | 'dicomweb' | 'mllp' | 'dicom';
export const surfaces: Surface[] = ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb', 'mllp', 'dicom'];
export { portVariables };

/** The port variables of the operator contract for these ports (the balancer and every node use the same). */
export function portEnvironment(ports: Record<Surface, number>): NodeJS.ProcessEnv {
  return Object.fromEntries(surfaces.map((surface) => [portVariables[surface], String(ports[surface])]));
}

/**
 * One port per surface that nobody listens on at any of `addresses` (the balancer on one loopback
 * address, each node on its own, all on the same ports as in a deployment), below Linux's
 * ephemeral range so that an outgoing connection cannot take one meanwhile.
 */
export async function freePortsOnEvery(addresses: string[]): Promise<Record<Surface, number>> {
  const ports = {} as Record<Surface, number>;
  const taken = new Set<number>();
  for (const surface of surfaces) {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 200) throw new Error('no port free on every loopback address');
      const port = randomInt(20_000, 32_000);
      if (taken.has(port)) continue;
      if ((await Promise.all(addresses.map((address) => canListen(address, port)))).every(Boolean)) {
        taken.add(port);
        ports[surface] = port;
        break;
      }
    }
  }
  return ports;
}

function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

export interface ServerState {
  backend: string;
  server: string;
  /** UP, DOWN, DRAIN, MAINT, or a transition such as "UP 1/2". */
  status: string;
  /** Connections open to the server now. */
  current: number;
  /** Connections or requests the server has had in all. */
  total: number;
}

export interface RunningHaproxy {
  socket: string;
  /** The environment the configuration was read with (for deploy/haproxy/node-state.sh too). */
  env: NodeJS.ProcessEnv;
  logs: string[];
  /** One command on the runtime API; resolves with its answer. */
  runtime(command: string): Promise<string>;
  servers(): Promise<ServerState[]>;
  /** Resolves once `server` has `status` in every backend (bounded). */
  waitFor(server: string, status: 'UP' | 'DOWN' | 'DRAIN', timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startHaproxy(options: { bind: string; nodes: [string, string]; ports: Record<Surface, number>; dir: string }): Promise<RunningHaproxy> {
  const socket = join(options.dir, 'haproxy.sock');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GATEWAY_LB_BIND: options.bind,
    GATEWAY_NODE1: options.nodes[0],
    GATEWAY_NODE2: options.nodes[1],
    GATEWAY_LB_SOCKET: socket,
    ...portEnvironment(options.ports),
  };
  const child = spawn(haproxyBinary, ['-db', '-f', haproxyConfig], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const collect = (chunk: Buffer) => logs.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const runtime = (command: string) =>
    new Promise<string>((resolve, reject) => {
      const connection = connect(socket);
      let answer = '';
      connection.setTimeout(5_000, () => connection.destroy(new Error(`the runtime API did not answer ${command}`)));
      connection.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
      connection.on('end', () => resolve(answer));
      connection.on('error', reject);
      connection.end(`${command}\n`);
    });
  const servers = async (): Promise<ServerState[]> => {
    const [header, ...rows] = (await runtime('show stat -1 4 -1')).split('\n').filter((line) => line !== '');
    const columns = header!.replace(/^# /, '').split(',');
    const at = (name: string) => columns.indexOf(name);
    return rows.map((row) => {
      const cells = row.split(',');
      return { backend: cells[at('pxname')]!, server: cells[at('svname')]!, status: cells[at('status')]!, current: Number(cells[at('scur')]), total: Number(cells[at('stot')]) };
    });
  };
  const deadline = Date.now() + 30_000;
  while (!existsSync(socket) || !(await runtime('show info').then(() => true, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`HAProxy did not start: ${logs.slice(-10).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    socket,
    env,
    logs,
    runtime,
    servers,
    async waitFor(server, status, timeoutMs = 60_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const states = (await servers()).filter((state) => state.server === server);
        if (states.length > 0 && states.every((state) => state.status === status)) return;
        if (Date.now() > end) throw new Error(`${server} is not ${status} everywhere: ${states.map((s) => `${s.backend} ${s.status}`).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
