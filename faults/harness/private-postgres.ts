import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from './ports.ts';

/**
 * A PostgreSQL 15 cluster of our own (the Debian binaries), in a temporary directory on a free
 * loopback port. The database-outage scenario stops it for 20 s and starts it again: doing that to
 * the machine's shared server, or to the service's embedded one, would disturb others or the
 * service's own supervision of it. As root, the server runs as the unprivileged "postgres" user,
 * which PostgreSQL requires.
 */
export interface PrivatePostgres {
  /** Superuser URL of the "postgres" database. */
  url: string;
  port: number;
  dataDir: string;
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  destroy(): void;
}

const binDir = '/usr/lib/postgresql/15/bin';

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const root = mkdtempSync(join(tmpdir(), 'cg-faults-pg-'));
  const dataDir = join(root, 'data');
  const logFile = join(root, 'postgres.log');
  const asRoot = userInfo().uid === 0;
  if (asRoot) chownSync(root, uidOf('postgres'), gidOf('postgres'));
  const run = (command: string, args: string[]) => {
    const full = asRoot ? ['-u', 'postgres', '--', join(binDir, command), ...args] : args;
    const result = spawnSync(asRoot ? 'runuser' : join(binDir, command), full, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  };
  run('initdb', ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
  const port = await freeLoopbackPort();
  // The service opens up to 20 connections per process and the CLI a few more.
  writeFileSync(
    join(dataDir, 'postgresql.auto.conf'),
    [`port = ${port}`, "listen_addresses = '127.0.0.1'", "unix_socket_directories = ''", 'max_connections = 100', 'fsync = on', 'shared_buffers = 64MB'].join('\n') + '\n',
  );
  if (asRoot) chownSync(join(dataDir, 'postgresql.auto.conf'), uidOf('postgres'), gidOf('postgres'));
  const pg = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    start() {
      run('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '30', 'start']);
    },
    stop(mode: 'fast' | 'immediate' = 'fast') {
      run('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop']);
    },
    destroy() {
      try {
        pg.stop('immediate');
      } catch {
        // already stopped
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  pg.start();
  return pg;
}

function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

function gidOf(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
}
