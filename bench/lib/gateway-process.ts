import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { relative } from 'node:path';
import { openEmbeddedPostgres } from '../../src/storage/embedded-postgres.ts';
import { progress } from './log.ts';
import { postmasterPid } from './process-tree.ts';
import { benchHost, gatewayPorts, refreshPorts } from './ports.ts';
import { serviceMallocEnvironment, serviceNodeOptions } from '../../src/cli/service-runtime.ts';

/**
 * The service under test, run exactly as an operator runs it (`node bin/clinical-gateway.js
 * serve`, DESIGN.md section 3) in a child process whose memory and CPU the bench samples.
 */
export interface GatewayProcess {
  pid: number;
  env: NodeJS.ProcessEnv;
  /** Surfaces that came up, by name (fhir, hl7, mllp, dicom, …). */
  surfaces: Map<string, { protocol: string; port: number }>;
  /** The PostgreSQL the service uses (the embedded one's URL is read from its data directory). */
  databaseUrl: string;
  /** CG_WORKERS it runs with. */
  workers: number;
  /** The local PostgreSQL server's postmaster (its tree is measured apart from the service's). */
  postgresPid?: number;
  stop(): Promise<void>;
}

export interface GatewayStart {
  root: string;
  dataDir: string;
  /** Unset: the embedded PostgreSQL under dataDir. */
  databaseUrl?: string;
  logFile: string;
  logLevel: string;
  /** 'dev-serve': bench/lib/dev-serve.ts instead of `serve` (surfaces not yet in the catalogue). */
  launcher: 'serve' | 'dev-serve';
  /** node --cpu-prof into this directory (written when the service exits). */
  cpuProfileDir?: string;
  /** CG_WORKERS: 1 is one service process; more is a supervisor and that many workers. */
  workers: number;
}

const startTimeoutMs = 180_000;

/**
 * Settings of the service to measure with, from BENCH_GATEWAY_ENV (`CG_NAME=VALUE,CG_OTHER=VALUE`;
 * empty: the service's defaults). Any other CG_ variable of the bench's own environment is left
 * out, so that a setting is measured only when asked for, and recorded in the results.
 */
export function gatewaySettings(text = process.env.BENCH_GATEWAY_ENV ?? ''): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const equals = pair.indexOf('=');
    const name = equals > 0 ? pair.slice(0, equals) : '';
    if (!/^CG_[A-Z0-9_]+$/.test(name)) throw new Error(`BENCH_GATEWAY_ENV: "${pair}" is not CG_NAME=VALUE`);
    settings[name] = pair.slice(equals + 1);
  }
  return settings;
}

export function gatewayEnv(start: Pick<GatewayStart, 'dataDir' | 'databaseUrl' | 'logLevel' | 'workers'>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('CG_')) env[name] = value;
  const own: Record<string, string> = {
    CG_DATA_DIR: start.dataDir,
    CG_BIND: benchHost,
    CG_FHIR_PORT: String(gatewayPorts.fhir),
    CG_HL7_PORT: String(gatewayPorts.hl7),
    CG_MPPS_PORT: String(gatewayPorts.mpps),
    CG_CONNECTIVITY_PORT: String(gatewayPorts.connectivity),
    CG_ADMIN_PORT: String(gatewayPorts.admin),
    CG_DICOMWEB_PORT: String(gatewayPorts.dicomweb),
    CG_MLLP_PORT: String(gatewayPorts.mllp),
    CG_DICOM_PORT: String(gatewayPorts.dicom),
    CG_DOCS: 'off',
    CG_LOG_LEVEL: start.logLevel,
    // Measured side by side with 1 and 2 workers; CPU and memory are of the whole process tree.
    CG_WORKERS: String(start.workers),
    ...(start.databaseUrl ? { CG_DATABASE_URL: start.databaseUrl } : {}),
  };
  const settings = gatewaySettings();
  // The bench's own variables (ports, folders, workers, logging, the database) are not a setting to measure.
  for (const name of Object.keys(settings)) if (name in own || name === 'CG_DATABASE_URL') throw new Error(`BENCH_GATEWAY_ENV: ${name} is set by the bench itself`);
  // The malloc settings as the launcher and `npm start` set them.
  return Object.assign(env, settings, serviceMallocEnvironment, own);
}

export async function startGatewayProcess(start: GatewayStart): Promise<GatewayProcess> {
  await refreshPorts();
  const env = gatewayEnv(start);
  const logFd = openSync(start.logFile, 'w');
  const profile = start.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${start.cpuProfileDir}`] : [];
  const args = [...serviceNodeOptions, ...profile, ...(start.launcher === 'serve' ? ['bin/clinical-gateway.js', 'serve'] : ['bench/lib/dev-serve.ts'])];
  const child = spawn(process.execPath, args, { cwd: start.root, env, stdio: ['ignore', logFd, 'pipe'] });
  const surfaces = await waitForListing(child, logFd, start.logFile);
  closeSync(logFd);
  for (const [name, surface] of surfaces) {
    if (surface.protocol === 'http') await waitForReady(`http://${benchHost}:${surface.port}/readyz`, name);
  }
  const databaseUrl = start.databaseUrl ?? (await openEmbeddedPostgres({ dataDir: start.dataDir })).connectionString;
  const postgresPid = await postmasterPid(databaseUrl).catch(() => undefined);
  progress(`gateway pid ${child.pid} (CG_WORKERS=${start.workers}) up: ${[...surfaces.keys()].join(', ') || 'no surfaces'}`);
  return {
    pid: child.pid!,
    env,
    surfaces,
    databaseUrl,
    workers: start.workers,
    ...(postgresPid !== undefined ? { postgresPid } : {}),
    stop: () => stopChild(child, 20_000),
  };
}

/** serve prints "Clinical Gateway is running …" and one line per surface once all listen. */
function waitForListing(child: ChildProcess, logFd: number, logFile: string): Promise<GatewayProcess['surfaces']> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => fail(new Error(`the gateway did not start within ${startTimeoutMs / 1000} s`)), startTimeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      // Relative to where the bench runs (the repository), so results never name a machine's folders.
      reject(new Error(`${error.message}; log: ${relative(process.cwd(), logFile)}\n${tail(logFile)}\n${text.slice(-2000)}`));
    };
    child.once('exit', (code, signal) => fail(new Error(`the gateway exited during start-up (${signal ?? code})`)));
    child.stderr!.on('data', (chunk: Buffer) => {
      writeSync(logFd, chunk);
      text += chunk.toString('utf8');
      const at = text.indexOf('Clinical Gateway is running');
      if (at < 0) return;
      // serve writes the whole listing in one write (atomic on a pipe below PIPE_BUF), ending in a newline.
      const listing = text.slice(at);
      if (!listing.endsWith('\n')) return;
      const surfaces = new Map<string, { protocol: string; port: number }>();
      for (const line of listing.split('\n').slice(1)) {
        const match = /^\s+(\S+)\s+(\w+):\/\/[^\s]+:(\d+)\s*$/.exec(line);
        if (match) surfaces.set(match[1]!, { protocol: match[2]!, port: Number(match[3]) });
      }
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stderr!.removeAllListeners('data');
      // Keep draining stderr so the child never blocks on a full pipe.
      child.stderr!.on('data', () => {});
      resolve(surfaces);
    });
  });
}

async function waitForReady(url: string, name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} did not become ready at ${url}`);
}

export async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}
