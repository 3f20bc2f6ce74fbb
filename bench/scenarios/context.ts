import type { BenchOptions } from '../lib/options.ts';
import type { Series } from '../report/series.ts';

/** What every scenario gets: options, where to write, and where to put its figures. */
export interface BenchContext {
  root: string;
  options: BenchOptions;
  workDir: string;
  logDir: string;
  series: Series[];
  skipped: { scenario: string; reason: string }[];
  /** Unique per bench invocation: keeps identifiers and control ids of runs apart. */
  runTag: string;
}

export function randomInt(max: number): number {
  return 1 + Math.floor(Math.random() * max);
}
