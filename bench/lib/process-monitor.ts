import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { treeOf, treeTicks } from './process-tree.ts';

/**
 * Samples what a system under load costs while a scenario runs: the resident memory (VmRSS of
 * /proc/<pid>/status) of its whole process tree (a supervisor and its workers, summed) every
 * 20 ms, and the CPU time of that tree and, apart, of the PostgreSQL server it uses (proc(5)).
 * VmHWM would give the peak since the process started, not the peak of one scenario, hence sampling.
 */
export interface ProcessUsage {
  peakRssMb: number;
  /**
   * Peak of the tree's proportional set size (Pss of /proc/<pid>/smaps_rollup), summed: pages
   * the processes share (the node binary, copy-on-write pages) counted once overall, where the
   * summed RSS counts them once per process. Sampled every 200 ms (the kernel walks the page tables).
   */
  peakPssMb: number;
  cpuSeconds: number;
  /** CPU time over wall time, in percent of one core. */
  cpuPercent: number;
  /** The same for the PostgreSQL server's processes (postmaster and backends), when watched. */
  postgresCpuPercent?: number;
}

/** What to watch: the roots of the system's own tree, and PostgreSQL's postmaster when it is local. */
export interface Watched {
  roots: number[];
  postgres?: number;
}

/** Clock ticks a second of /proc/<pid>/stat's CPU times. */
export const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const sampleIntervalMs = 20;
/** Workers can be restarted: the tree is looked up again this often. */
const treeRefreshMs = 500;

function readPssKb(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export function readRssKb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export class ProcessMonitor {
  readonly #watched: Watched;
  #tree: number[] = [];
  #treeAt = 0;
  #peakKb = 0;
  #peakPssKb = 0;
  #samples = 0;
  #cpuStart = 0;
  #postgresStart = 0;
  #started = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(watched: Watched | number | number[]) {
    this.#watched = typeof watched === 'number' ? { roots: [watched] } : Array.isArray(watched) ? { roots: watched } : watched;
  }

  start(): void {
    this.#refreshTree();
    this.#peakKb = this.#rssKb();
    this.#peakPssKb = this.#pssKb();
    this.#cpuStart = treeTicks(this.#tree);
    this.#postgresStart = this.#postgresTicks();
    this.#started = performance.now();
    this.#timer = setInterval(() => {
      if (performance.now() - this.#treeAt > treeRefreshMs) this.#refreshTree();
      this.#peakKb = Math.max(this.#peakKb, this.#rssKb());
      if (++this.#samples % 10 === 0) this.#peakPssKb = Math.max(this.#peakPssKb, this.#pssKb());
    }, sampleIntervalMs);
  }

  stop(): ProcessUsage {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#refreshTree();
    this.#peakKb = Math.max(this.#peakKb, this.#rssKb());
    this.#peakPssKb = Math.max(this.#peakPssKb, this.#pssKb());
    const cpuSeconds = (treeTicks(this.#tree) - this.#cpuStart) / ticksPerSecond;
    const wallSeconds = (performance.now() - this.#started) / 1000;
    const percent = (seconds: number) => (wallSeconds > 0 ? (100 * seconds) / wallSeconds : 0);
    const usage: ProcessUsage = { peakRssMb: this.#peakKb / 1024, peakPssMb: this.#peakPssKb / 1024, cpuSeconds, cpuPercent: percent(cpuSeconds) };
    if (this.#watched.postgres !== undefined) usage.postgresCpuPercent = percent((this.#postgresTicks() - this.#postgresStart) / ticksPerSecond);
    return usage;
  }

  #refreshTree(): void {
    const exclude = new Set(this.#watched.postgres !== undefined ? [this.#watched.postgres] : []);
    this.#tree = treeOf(this.#watched.roots, exclude);
    this.#treeAt = performance.now();
  }

  #postgresTicks(): number {
    return this.#watched.postgres === undefined ? 0 : treeTicks(treeOf([this.#watched.postgres]));
  }

  #pssKb(): number {
    return this.#tree.reduce((sum, pid) => sum + readPssKb(pid), 0);
  }

  #rssKb(): number {
    return this.#tree.reduce((sum, pid) => sum + readRssKb(pid), 0);
  }
}

/** Runs `work` while monitoring `watched`; returns both results. */
export async function monitored<T>(watched: Watched | number | number[], work: () => Promise<T>): Promise<{ result: T; usage: ProcessUsage }> {
  const monitor = new ProcessMonitor(watched);
  monitor.start();
  try {
    const result = await work();
    return { result, usage: monitor.stop() };
  } catch (error) {
    monitor.stop();
    throw error;
  }
}
