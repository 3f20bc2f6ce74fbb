import { ConfigError } from './config-error.ts';

/**
 * The protective limits an operator can tune (docs/security.md lists each with what the client
 * sees when it is reached). Defaults are what a single node serving a few dozen sites needs.
 */
export interface GatewayLimits {
  search: {
    /** Values across all parameters of one search (comma-separated alternatives included). */
    maxValues: number;
    /** Times one parameter may be repeated in one search. */
    maxRepeats: number;
    /** PostgreSQL statement_timeout of a search transaction. */
    timeoutMs: number;
    /** PostgreSQL work_mem of a search transaction (a PostgreSQL size, e.g. 4MB). */
    workMem: string;
    /** Searches one API key may have running at once in one process. */
    perKeyConcurrency: number;
    /** Database connections searches may use, apart from the pool intake and writes use. */
    connections: number;
  };
  fhirBundle: {
    /** Entries of one batch or transaction Bundle (POST /fhir). */
    maxEntries: number;
    /** Bytes of the body of a batch or transaction Bundle. */
    maxBytes: number;
  };
  dicom: {
    /** TCP connections from one remote address, associated or not. */
    maxConnectionsPerAddress: number;
    /** Data set bytes of one C-STORE. */
    maxInstanceBytes: number;
    /** Free bytes in the DICOM storage folder's file system below which stores are refused as out of resources. */
    minFreeDiskBytes: number;
  };
  dicomweb: {
    /** Bytes of one STOW-RS request body (every part together). */
    maxStowBytes: number;
  };
  mllp: {
    maxConnections: number;
    maxConnectionsPerAddress: number;
    /** Bytes of unfinished frames buffered across every MLLP connection of the process. */
    unfinishedFrameBytes: number;
  };
}

const units: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

export function loadLimits(env: NodeJS.ProcessEnv): GatewayLimits {
  return {
    search: {
      maxValues: count(env, 'CG_SEARCH_MAX_VALUES', 200),
      maxRepeats: count(env, 'CG_SEARCH_MAX_REPEATS', 10),
      timeoutMs: count(env, 'CG_SEARCH_TIMEOUT_MS', 10_000),
      workMem: postgresSize(env, 'CG_SEARCH_WORK_MEM', '4MB'),
      perKeyConcurrency: count(env, 'CG_SEARCH_CONCURRENCY_PER_KEY', 4),
      connections: count(env, 'CG_SEARCH_DB_CONNECTIONS', 5),
    },
    fhirBundle: {
      maxEntries: count(env, 'CG_FHIR_BUNDLE_MAX_ENTRIES', 1000),
      maxBytes: size(env, 'CG_FHIR_BUNDLE_MAX_SIZE', 16 * 2 ** 20),
    },
    dicom: {
      maxConnectionsPerAddress: count(env, 'CG_DICOM_MAX_CONNECTIONS_PER_ADDRESS', 16),
      maxInstanceBytes: size(env, 'CG_DICOM_MAX_INSTANCE_SIZE', 4 * 2 ** 30),
      minFreeDiskBytes: size(env, 'CG_DICOM_MIN_FREE_DISK', 2 ** 30, true),
    },
    dicomweb: {
      maxStowBytes: size(env, 'CG_DICOMWEB_MAX_STOW_SIZE', 4 * 2 ** 30),
    },
    mllp: {
      maxConnections: count(env, 'CG_MLLP_MAX_CONNECTIONS', 256),
      maxConnectionsPerAddress: count(env, 'CG_MLLP_MAX_CONNECTIONS_PER_ADDRESS', 32),
      unfinishedFrameBytes: size(env, 'CG_MLLP_UNFINISHED_BYTES', 64 * 2 ** 20),
    },
  };
}

export function count(env: NodeJS.ProcessEnv, variable: string, fallback: number): number {
  const value = env[variable]?.trim();
  if (!value) return fallback;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) throw new ConfigError(`${variable} must be a whole number of at least 1`);
  return Number(value);
}

/** Bytes, with an optional unit: 500MB, 4GiB (kB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024). */
export function parseSize(value: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = match ? units[match[2]!.toLowerCase()] : undefined;
  if (!match || unit === undefined) return undefined;
  return Math.floor(Number(match[1]) * unit);
}

export function size(env: NodeJS.ProcessEnv, variable: string, fallback: number, zeroAllowed = false): number {
  const value = env[variable]?.trim();
  if (!value) return fallback;
  const bytes = parseSize(value);
  if (bytes === undefined || (!zeroAllowed && bytes < 1)) throw new ConfigError(`${variable} must be a size in bytes, optionally with a unit (e.g. 500MB, 4GiB)`);
  return bytes;
}

/** work_mem goes into SET LOCAL verbatim, so only PostgreSQL's own size syntax passes. */
function postgresSize(env: NodeJS.ProcessEnv, variable: string, fallback: string): string {
  const value = env[variable]?.trim();
  if (!value) return fallback;
  if (!/^\d{1,9}(kB|MB|GB)$/.test(value)) throw new ConfigError(`${variable} must be a PostgreSQL size such as 4MB or 512kB`);
  return value;
}
