import { ConfigError } from './config-error.ts';
import { count, size } from './limits.ts';

/** The service-wide free-space floor (docs/data-lifecycle.md#disk-safety). */
export interface DiskSpaceSettings {
  /** Free bytes below which new data is refused (CG_MIN_FREE_DISK); 0 with a 0 percentage: off. */
  minFreeBytes: number;
  /** Free share of each file system, in percent, below which new data is refused (CG_MIN_FREE_DISK_PERCENT). */
  minFreePercent: number;
  /** How often free space is sampled (CG_DISK_CHECK_INTERVAL_SECONDS): requests read the last sample. */
  checkIntervalMs: number;
}

export function loadDiskSpaceSettings(env: NodeJS.ProcessEnv): DiskSpaceSettings {
  return {
    minFreeBytes: size(env, 'CG_MIN_FREE_DISK', 256 * 2 ** 20, true),
    minFreePercent: percent(env, 'CG_MIN_FREE_DISK_PERCENT', 0),
    checkIntervalMs: interval(env, 'CG_DISK_CHECK_INTERVAL_SECONDS', 5) * 1000,
  };
}

function percent(env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  const value = env[variable]?.trim();
  if (!value) return fallback;
  const parsed = /^\d{1,2}(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!(parsed >= 0 && parsed < 100)) throw new ConfigError(`${variable} must be a percentage from 0 to 99.9 (e.g. 5 or 2.5)`);
  return parsed;
}

function interval(env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  const seconds = count(env, variable, fallback);
  if (seconds > 3600) throw new ConfigError(`${variable} must be a whole number of seconds from 1 to 3600`);
  return seconds;
}
