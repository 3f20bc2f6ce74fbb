import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from './config-error.ts';
import { loadAdminSessionSettings, type AdminSessionSettings } from './admin-session.ts';
import { loadBulkExportSettings, type BulkExportSettings } from './bulk-export.ts';
import { loadDiskSpaceSettings, type DiskSpaceSettings } from './disk-space.ts';
import { loadLimits, size, type GatewayLimits } from './limits.ts';

/** The operator contract of DESIGN.md section 3: every variable is optional. */
export interface GatewayConfig {
  databaseUrl?: string;
  dataDir: string;
  bind: string;
  ports: {
    fhir?: number;
    hl7?: number;
    mpps?: number;
    connectivity?: number;
    admin?: number;
    dicomweb?: number;
    mllp?: number;
    dicom?: number;
  };
  dicomPublic: { host: string; port: number; ip?: string };
  tls?: { cert: Buffer; key: Buffer };
  docs: boolean;
  logLevel: string;
  limits: GatewayLimits;
  /** Browser origins allowed to call the FHIR API (CORS); empty: CORS is off. "*" allows any origin. */
  fhirCorsOrigins: string[];
  /**
   * Browser origins allowed to read the DICOMweb origin (CORS), for the admin app's image viewer
   * (CG_DICOMWEB_CORS_ORIGINS); unset: the admin origin's own address (dicomwebCorsOrigins()).
   */
  dicomwebCorsOrigins?: string[];
  /** The DICOMweb origin as browsers reach it (CG_DICOMWEB_PUBLIC_URL); unset: the admin page's host with CG_DICOMWEB_PORT. */
  dicomwebPublicUrl?: string;
  /** Worker processes `serve` runs (CG_WORKERS); 1 serves everything from one process. */
  workers: number;
  /**
   * Load balancers whose PROXY protocol headers and X-Forwarded-For are believed
   * (CG_TRUSTED_PROXIES: addresses and CIDR ranges); empty: none, the socket's address stands.
   */
  trustedProxies: string[];
  /**
   * This node's name among the nodes sharing one database and one DICOM storage folder
   * (CG_NODE_ID). Unset here when the variable is: `serve` then uses the id kept in the data
   * directory (src/server/node-identity.ts), generated on the first start.
   */
  nodeId?: string;
  /** Where stored DICOM instances live, shared by every node (CG_DICOM_STORAGE_DIR; default CG_DATA_DIR/dicom). */
  dicomStorageDir: string;
  /**
   * Bytes of recently retrieved instances a node keeps in memory, shared out between its workers
   * (CG_DICOM_FILE_CACHE_SIZE; 0, the default: none). See src/storage/dicom/stored-file-cache.ts.
   */
  dicomFileCacheBytes: number;
  /** FHIR Bulk Data export: file folder, expiry, limits (CG_EXPORT_*). */
  bulkExport: BulkExportSettings;
  /** Administration app sessions: the idle limit (CG_ADMIN_SESSION_IDLE_SECONDS). */
  adminSession: AdminSessionSettings;
  /** The free-space floor below which new data is refused (CG_MIN_FREE_DISK*). */
  diskSpace: DiskSpaceSettings;
  /** SHA-256 of CG_METRICS_TOKEN, the Bearer token of /metrics; unset: loopback scrapers only (docs/metrics.md). */
  metricsTokenHash?: Buffer;
}

export { ConfigError };

/**
 * Off unless set: with one worker it retrieves the bench's small set 1.07x-1.18x Orthanc, but its
 * memory is resident for the life of each worker once used, and with two workers each holds only
 * the studies it served, so the bench gains little there (docs/performance.md, "The cache's
 * misses, cured; why it is still off by default").
 */
const defaultDicomFileCacheBytes = 0;

const defaultPorts = {
  fhir: 8080,
  hl7: 8081,
  mpps: 8082,
  connectivity: 8083,
  admin: 8084,
  dicomweb: 8085,
  mllp: 2575,
  dicom: 11112,
} as const;

/** The operator contract's port variable of each surface (tests and the fault campaign set the same). */
export const portVariables = {
  fhir: 'CG_FHIR_PORT',
  hl7: 'CG_HL7_PORT',
  mpps: 'CG_MPPS_PORT',
  connectivity: 'CG_CONNECTIVITY_PORT',
  admin: 'CG_ADMIN_PORT',
  dicomweb: 'CG_DICOMWEB_PORT',
  mllp: 'CG_MLLP_PORT',
  dicom: 'CG_DICOM_PORT',
} as const;

const logLevels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const ports: GatewayConfig['ports'] = {};
  for (const [surface, variable] of Object.entries(portVariables) as [keyof typeof portVariables, string][]) {
    ports[surface] = parsePort(env[variable], defaultPorts[surface], variable);
  }
  const bind = env.CG_BIND?.trim() || '127.0.0.1';
  const dicomPort = parsePort(env.CG_DICOM_PUBLIC_PORT, ports.dicom ?? defaultPorts.dicom, 'CG_DICOM_PUBLIC_PORT')!;
  const publicIp = env.CG_DICOM_PUBLIC_IP?.trim() || undefined;
  const wildcard = bind === '0.0.0.0' || bind === '::';
  const dicomPublic = {
    host: env.CG_DICOM_PUBLIC_HOST?.trim() || (wildcard ? '127.0.0.1' : bind),
    port: dicomPort,
    ...(publicIp ? { ip: publicIp } : {}),
  };
  const certFile = env.CG_TLS_CERT?.trim();
  const keyFile = env.CG_TLS_KEY?.trim();
  if (Boolean(certFile) !== Boolean(keyFile)) throw new ConfigError('CG_TLS_CERT and CG_TLS_KEY must be set together');
  let tls: GatewayConfig['tls'];
  if (certFile && keyFile) {
    try {
      tls = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
    } catch (error) {
      throw new ConfigError(`cannot read the TLS certificate or key: ${(error as Error).message}`);
    }
  }
  const docs = parseSwitch(env.CG_DOCS, true, 'CG_DOCS');
  const logLevel = (env.CG_LOG_LEVEL?.trim() || 'info').toLowerCase();
  if (!logLevels.has(logLevel)) throw new ConfigError(`CG_LOG_LEVEL must be one of ${[...logLevels].join(', ')}`);
  const fhirCorsOrigins = parseOrigins(env.CG_FHIR_CORS_ORIGINS, 'CG_FHIR_CORS_ORIGINS');
  const dicomwebCorsOrigins = env.CG_DICOMWEB_CORS_ORIGINS?.trim() ? parseExactOrigins(env.CG_DICOMWEB_CORS_ORIGINS, 'CG_DICOMWEB_CORS_ORIGINS') : undefined;
  const dicomwebPublicUrl = parseExactOrigins(env.CG_DICOMWEB_PUBLIC_URL, 'CG_DICOMWEB_PUBLIC_URL')[0];
  if (env.CG_DICOMWEB_PUBLIC_URL?.includes(',')) throw new ConfigError('CG_DICOMWEB_PUBLIC_URL names one origin');
  const workers = parseWorkers(env.CG_WORKERS);
  const trustedProxies = parseTrustedProxies(env.CG_TRUSTED_PROXIES);
  const dataDir = resolve(env.CG_DATA_DIR?.trim() || './data');
  const nodeId = parseNodeId(env.CG_NODE_ID);
  return {
    ...(env.CG_DATABASE_URL?.trim() ? { databaseUrl: env.CG_DATABASE_URL.trim() } : {}),
    dataDir,
    bind,
    ports,
    dicomPublic,
    ...(tls ? { tls } : {}),
    docs,
    logLevel,
    limits: loadLimits(env),
    fhirCorsOrigins,
    ...(dicomwebCorsOrigins ? { dicomwebCorsOrigins } : {}),
    ...(dicomwebPublicUrl ? { dicomwebPublicUrl } : {}),
    workers,
    trustedProxies,
    ...(nodeId !== undefined ? { nodeId } : {}),
    dicomStorageDir: resolve(env.CG_DICOM_STORAGE_DIR?.trim() || join(dataDir, 'dicom')),
    dicomFileCacheBytes: size(env, 'CG_DICOM_FILE_CACHE_SIZE', defaultDicomFileCacheBytes, true),
    bulkExport: loadBulkExportSettings(env, dataDir),
    adminSession: loadAdminSessionSettings(env),
    diskSpace: loadDiskSpaceSettings(env),
    ...metricsToken(env.CG_METRICS_TOKEN),
  };
}

/** Only its hash is kept: the token is compared as a hash, in constant time (src/platform/metrics/metrics-route.ts). */
function metricsToken(value: string | undefined): { metricsTokenHash?: Buffer } {
  const token = value?.trim();
  if (!token) return {};
  if (token.length < 16 || /\s/.test(token)) throw new ConfigError('CG_METRICS_TOKEN must be at least 16 characters without spaces (for example: openssl rand -hex 32)');
  return { metricsTokenHash: createHash('sha256').update(token).digest() };
}

/** Unset or blank: the node's kept id (src/server/node-identity.ts); set: checked by isNodeId. */
function parseNodeId(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed) return undefined;
  if (!isNodeId(trimmed)) throw new ConfigError(nodeIdRule('CG_NODE_ID'));
  return trimmed;
}

/**
 * A node id names the node's folder of temporary DICOM files in the shared storage and its lease
 * in the database: a short token that is a safe file name everywhere (no dots, so never "." or
 * ".."), and never the name of a folder the storage uses for something else (tmp/worker-<n> of
 * versions before nodes, which the data directory's own node recovers).
 */
export function isNodeId(value: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/.test(value) && !/^worker-\d+$/i.test(value);
}

export function nodeIdRule(variable: string): string {
  return `${variable} must be 1 to 40 letters, digits, '-' or '_', starting with a letter or digit (and not worker-<n>)`;
}

/**
 * A comma-separated list of IPv4/IPv6 addresses and CIDR ranges (10.0.0.5, 10.0.0.0/24, fd00::/64).
 * No wildcard: trusting everyone would let any client name its own address.
 */
function parseTrustedProxies(value: string | undefined): string[] {
  const entries = (value ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  return [...new Set(entries.map((entry) => {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const bits = prefix === undefined ? undefined : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (family === 0 || extra !== undefined || (bits !== undefined && !(bits <= (family === 4 ? 32 : 128)))) {
      throw new ConfigError(`CG_TRUSTED_PROXIES: ${JSON.stringify(entry)} is not an IPv4/IPv6 address or CIDR range (the load balancers' addresses, comma-separated)`);
    }
    return bits === undefined ? address! : `${address}/${bits}`;
  }))];
}

/**
 * A comma-separated list of origins (scheme://host[:port], RFC 6454 section 6.1), or "*". An
 * origin must be written as browsers send it in the Origin header: no path, no trailing slash.
 */
function parseOrigins(value: string | undefined, variable: string): string[] {
  const origins = (value ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  for (const origin of origins) {
    if (origin === '*') continue;
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin.toLowerCase()) {
      throw new ConfigError(`${variable}: ${JSON.stringify(origin)} is not an origin such as https://app.example.org (scheme, host and optional port; no path)`);
    }
  }
  return [...new Set(origins.map((origin) => origin.toLowerCase()))];
}

/**
 * The browser origins the DICOMweb origin allows: CG_DICOMWEB_CORS_ORIGINS, or else the admin
 * origin's addresses as a browser names them, when the configuration tells: its port known (the
 * composition root writes in the port a free-port start got) and its host an address (a wildcard
 * or loopback bind is reached as 127.0.0.1 and localhost). Behind a load balancer the operator
 * names the admin origin in CG_DICOMWEB_CORS_ORIGINS.
 */
export function dicomwebCorsOrigins(config: GatewayConfig): string[] {
  if (config.dicomwebCorsOrigins) return config.dicomwebCorsOrigins;
  const adminPort = config.ports.admin;
  if (adminPort === undefined || adminPort === 0) return [];
  const scheme = config.tls ? 'https' : 'http';
  const loopbackOrWildcard = ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(config.bind);
  const hosts = loopbackOrWildcard ? ['127.0.0.1', 'localhost'] : [isIP(config.bind) === 6 ? `[${config.bind}]` : config.bind];
  return hosts.map((host) => new URL(`${scheme}://${host}:${adminPort}`).origin);
}

/** Origins without the "*" wildcard: a bearer token must never be readable by any page that asks. */
function parseExactOrigins(value: string | undefined, variable: string): string[] {
  const origins = parseOrigins(value, variable);
  if (origins.includes('*')) throw new ConfigError(`${variable}: "*" is not allowed here; name each origin`);
  return origins;
}

/** Unset or blank: one worker per CPU this process may run on (its affinity, not the machine's). */
function parseWorkers(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return availableParallelism();
  const workers = Number(value.trim());
  if (!Number.isInteger(workers) || workers < 1 || workers > 256) throw new ConfigError('CG_WORKERS must be a whole number from 1 to 256');
  return workers;
}

/** Unset: the default; set but blank: the surface is not started. */
function parsePort(value: string | undefined, fallback: number, variable: string): number | undefined {
  if (value === undefined) return fallback;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  const port = Number(trimmed);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`${variable} must be a port number (0-65535) or blank`);
  return port;
}

function parseSwitch(value: string | undefined, fallback: boolean, variable: string): boolean {
  if (value === undefined || value.trim() === '') return fallback;
  const normalized = value.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(normalized)) return true;
  if (['off', 'false', '0', 'no'].includes(normalized)) return false;
  throw new ConfigError(`${variable} must be on or off`);
}
