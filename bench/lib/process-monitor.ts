import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Samples one process's resident memory (VmRSS of /proc/<pid>/status) and CPU time (utime +
 * stime of /proc/<pid>/stat, proc(5)) while a scenario runs. VmHWM would give the peak since
 * the process started, not the peak of one scenario, hence sampling.
 */
export interface ProcessUsage {
  peakRssMb: number;
  cpuSeconds: number;
  /** CPU time over wall time, in percent of one core. */
  cpuPercent: number;
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const sampleIntervalMs = 20;

export function readRssKb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export function readCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return 0;
  }
}

export class ProcessMonitor {
  readonly #pids: number[];
  #peakKb = 0;
  #cpuStart = 0;
  #started = 0;
  #timer: NodeJS.Timeout | undefined;

  /** Several pids are summed (a server and its worker processes). */
  constructor(pids: number | number[]) {
    this.#pids = Array.isArray(pids) ? pids : [pids];
  }

  start(): void {
    this.#peakKb = this.#rssKb();
    this.#cpuStart = this.#cpu();
    this.#started = performance.now();
    this.#timer = setInterval(() => {
      this.#peakKb = Math.max(this.#peakKb, this.#rssKb());
    }, sampleIntervalMs);
  }

  stop(): ProcessUsage {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#peakKb = Math.max(this.#peakKb, this.#rssKb());
    const cpuSeconds = this.#cpu() - this.#cpuStart;
    const wallSeconds = (performance.now() - this.#started) / 1000;
    return { peakRssMb: this.#peakKb / 1024, cpuSeconds, cpuPercent: wallSeconds > 0 ? (100 * cpuSeconds) / wallSeconds : 0 };
  }

  #rssKb(): number {
    return this.#pids.reduce((sum, pid) => sum + readRssKb(pid), 0);
  }

  #cpu(): number {
    return this.#pids.reduce((sum, pid) => sum + readCpuSeconds(pid), 0);
  }
}

/** Runs `work` while monitoring `pids`; returns both results. */
export async function monitored<T>(pids: number | number[], work: () => Promise<T>): Promise<{ result: T; usage: ProcessUsage }> {
  const monitor = new ProcessMonitor(pids);
  monitor.start();
  try {
    const result = await work();
    return { result, usage: monitor.stop() };
  } catch (error) {
    monitor.stop();
    throw error;
  }
}
