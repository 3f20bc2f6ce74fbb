import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';

/** What the figures were measured on: they mean little without it. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  kernel: string;
  node: string;
  date: string;
  commit: string;
  /** Uncommitted changes in the tree when the bench ran. */
  dirty: boolean;
  /** 1-minute load average when the bench started and when it ended: above the core count, other work shared the machine. */
  loadAverage: { start: number; end?: number };
}

export function loadAverageNow(): number {
  return Math.round(loadavg()[0]! * 100) / 100;
}

export function describeMachine(root: string): MachineInfo {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  return {
    cpuModel: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    kernel: release(),
    node: process.version,
    date: new Date().toISOString(),
    loadAverage: { start: loadAverageNow() },
    commit: git('rev-parse', '--short=12', 'HEAD') || 'unknown',
    // The bench's own earlier results do not make the measured code different.
    dirty: git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results') !== '',
  };
}
