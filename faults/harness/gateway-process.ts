import { portVariables } from '../../src/config/env.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { freeLoopbackPort } from './ports.ts';
import { processGroup, readResident } from './process-stats.ts';
import { withDeadline } from './timing.ts';
import { serviceMallocEnvironment, serviceNodeOptions } from '../../src/cli/service-runtime.ts';

export type SurfaceName = 'fhir' | 'hl7' | 'mpps' | 'connectivity' | 'admin' | 'dicomweb' | 'mllp' | 'dicom';
export const surfaceNames: SurfaceName[] = ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb', 'mllp', 'dicom'];

export const repositoryRoot = resolve(import.meta.dirname, '../..');
const cliPath = join(repositoryRoot, 'bin/clinical-gateway.js');
const serveArgs = [...serviceNodeOptions, cliPath, 'serve'];

/** The campaign's setting: a supervisor and two workers, as `serve` runs on a two-core machine. */
export const campaignWorkers = 2;

/**
 * The service as operators run it (`clinical-gateway serve`), as a child process on a data
 * directory of its own, fixed loopback ports and an external PostgreSQL, so that it can be killed
 * with SIGKILL and started again on the same state. It leads a process group of its own (the
 * supervisor and its workers), which a kill takes down whole, as a power cut of the machine
 * would. Logs go to a file per start for diagnosis.
 */
export class GatewayProcess {
  readonly dataDir: string;
  readonly databaseUrl: string;
  readonly ports: Record<SurfaceName, number>;
  /** The loopback address the listeners bind (CG_BIND). */
  readonly bind: string;
  readonly logDir: string;
  /** Surfaces the last start reported as listening. */
  listening = new Set<SurfaceName>();
  /** True between the end of a start and the next kill or stop. */
  ready = false;
  starts = 0;
  #child: ChildProcess | undefined;
  #exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> | undefined;
  #extraEnv: NodeJS.ProcessEnv;
  #log: WriteStream | undefined;
  unexpectedExits: string[] = [];
  #expectingExit = false;

  private constructor(dataDir: string, databaseUrl: string, ports: Record<SurfaceName, number>, extraEnv: NodeJS.ProcessEnv, bind: string, logDir: string) {
    this.dataDir = dataDir;
    this.databaseUrl = databaseUrl;
    this.ports = ports;
    this.bind = bind;
    this.logDir = logDir;
    this.#extraEnv = extraEnv;
    mkdirSync(this.logDir, { recursive: true });
  }

  /** `ports` and `bind` given: a node of several on the same ports, each on its own loopback address. */
  static async create(options: { dataDir: string; databaseUrl: string; env?: NodeJS.ProcessEnv; bind?: string; ports?: Record<SurfaceName, number>; logDir?: string }): Promise<GatewayProcess> {
    let ports = options.ports;
    if (!ports) {
      ports = {} as Record<SurfaceName, number>;
      // Distinct: two surfaces given one port made the service's start fail with EADDRINUSE.
      const taken = new Set<number>();
      for (const name of surfaceNames) taken.add((ports[name] = await freeLoopbackPort(taken)));
    }
    return new GatewayProcess(options.dataDir, options.databaseUrl, ports, options.env ?? {}, options.bind ?? '127.0.0.1', options.logDir ?? join(options.dataDir, '..', 'logs'));
  }

  /** The environment of the operator contract (DESIGN.md section 3) for this instance. */
  env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...serviceMallocEnvironment,
      CG_DATA_DIR: this.dataDir,
      CG_DATABASE_URL: this.databaseUrl,
      CG_BIND: this.bind,
      CG_LOG_LEVEL: 'warn',
      CG_DOCS: 'on',
      CG_WORKERS: String(campaignWorkers),
      ...this.#extraEnv,
    };
    for (const name of surfaceNames) env[portVariables[name]] = String(this.ports[name]);
    return env;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Starts `serve` and resolves once it prints that it is running (its listeners are bound). */
  async start(timeoutMs = 180_000): Promise<void> {
    if (this.running) throw new Error('the service is already running');
    this.starts++;
    this.ready = false;
    this.#log = createWriteStream(join(this.logDir, `serve-${this.starts}.log`));
    const child = spawn(process.execPath, serveArgs, { cwd: repositoryRoot, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.#child = child;
    this.#expectingExit = false;
    child.stdout!.pipe(this.#log, { end: false });
    let stderr = '';
    const ready = new Promise<void>((resolveReady, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        this.#log?.write(chunk);
        stderr += chunk.toString('utf8');
        if (stderr.length > 64_000) stderr = stderr.slice(-32_000);
        const at = stderr.indexOf('Clinical Gateway is running');
        if (at >= 0) {
          const listening = new Set<SurfaceName>();
          for (const line of stderr.slice(at).split('\n').slice(1)) {
            const name = line.trim().split(/\s+/)[0] as SurfaceName;
            if (surfaceNames.includes(name)) listening.add(name);
          }
          // The summary is written in one call; wait for its last line before reading it.
          if (stderr.slice(at).split('\n').length > listening.size) {
            this.listening = listening;
            this.ready = true;
            resolveReady();
          }
        }
      });
      child.once('exit', (code, signal) => reject(new Error(`serve exited before it was ready (code ${code}, signal ${signal}): ${stderr.slice(-2000)}`)));
    });
    this.#exit = new Promise((resolveExit) =>
      child.once('exit', (code, signal) => {
        if (!this.#expectingExit) this.unexpectedExits.push(`exit code ${code} signal ${signal} (start ${this.starts})`);
        resolveExit({ code, signal });
      }),
    );
    await withDeadline(timeoutMs, 'service start', ready);
  }

  /** The first error-looking lines the last start wrote outside its JSON log (a crash's trace). */
  crashExcerpt(): string {
    try {
      const text = readFileSync(join(this.logDir, `serve-${this.starts}.log`), 'utf8');
      const lines = text.split('\n').filter((l) => !l.startsWith('{'));
      const at = lines.findIndex((l) => /Error|Unhandled|throw/.test(l));
      return at < 0 ? '' : lines.slice(at, at + 6).map((l) => l.trim()).join(' / ');
    } catch {
      return '';
    }
  }

  /** SIGKILL to the whole process group: no shutdown hook runs in any process, as in a power cut. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.#expectingExit = true;
    this.ready = false;
    this.#killGroup();
    await this.#exit;
    await this.#groupGone();
    this.#log?.end();
  }

  #killGroup(): void {
    try {
      process.kill(-this.#child!.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }

  /** Workers outlive their supervisor by moments; a restart must not meet them on its ports. */
  async #groupGone(): Promise<void> {
    for (let i = 0; i < 100 && processGroup(this.#child!.pid!).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** SIGTERM and wait for the graceful shutdown (bounded; SIGKILL after the deadline). */
  async stop(timeoutMs = 20_000): Promise<void> {
    if (!this.running) return;
    this.#expectingExit = true;
    this.#child!.kill('SIGTERM');
    try {
      await withDeadline(timeoutMs, 'graceful shutdown', this.#exit!);
    } catch {
      this.#killGroup();
      await this.#exit;
    }
    this.#killGroup();
    await this.#groupGone();
    this.#log?.end();
  }

  /** The resident memory of the supervisor and its workers together, in bytes (from /proc); undefined when not running. */
  residentBytes(): number | undefined {
    if (!this.pid) return undefined;
    const sizes = processGroup(this.pid).map(readResident).filter((size): size is number => size !== undefined);
    return sizes.length ? sizes.reduce((sum, size) => sum + size, 0) : undefined;
  }

  /** Every process of the service (supervisor and workers). */
  processes(): number[] {
    return this.pid ? processGroup(this.pid) : [];
  }
}
