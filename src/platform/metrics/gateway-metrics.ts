/**
 * The service's Prometheus metrics (prom-client), one registry per process, made by the
 * composition root and handed to the surfaces in Services. Names and labels follow Prometheus's
 * conventions (https://prometheus.io/docs/practices/naming/): a `cg_` prefix, base units
 * (seconds), `_total` for counters. Every label takes its values from a closed set (a route
 * pattern, a status code, a message type of an allowlist, an outcome, a reason written in the
 * code): nothing a client sends becomes a label value as it is, so no site, patient, key or
 * free text can reach a scrape, and the number of series stays bounded.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../../storage/database.ts';
import type { CacheLookup, StoredFileCache } from '../../storage/dicom/stored-file-cache.ts';
import { offerToCluster } from './cluster-scrape.ts';
import { observeDatabasePools } from './database-metrics.ts';
import { hl7v2MessageType, hl7v3Interaction } from './hl7-message-types.ts';

export type Hl7Transport = 'http' | 'mllp';
/** The acknowledgement code, or `refused` for a message turned away before intake (sender not registered). */
export type Hl7Outcome = 'AA' | 'AE' | 'AR' | 'refused';
export type DicomInstanceOutcome = 'stored' | 'duplicate' | 'refused' | 'failed';

export interface GatewayMetrics {
  readonly registry: Registry;
  /** One answered HTTP request; `route` is the route's pattern (undefined: no route matched). */
  httpRequest(surface: string, method: string, route: string | undefined, statusCode: number, seconds: number): void;
  hl7v2Message(transport: Hl7Transport, messageType: string, outcome: Hl7Outcome): void;
  hl7v3Message(raw: Uint8Array, outcome: Hl7Outcome): void;
  /** `reason` is one of the listener's own fixed texts, never the peer's. */
  dicomAssociation(outcome: 'accepted' | 'rejected', reason?: string): void;
  dicomInstance(outcome: DicomInstanceOutcome): void;
  /** Pool gauges and connection timings of the process's database (database-metrics.ts). */
  watchDatabase(database: Database): void;
  /** One WADO-RS instance looked up in the stored-file cache. */
  dicomFileCacheLookup(outcome: CacheLookup): void;
  /** The bytes the process's stored-file cache holds, as a gauge read at each scrape. */
  watchDicomFileCache(cache: StoredFileCache): void;
}

/** Request durations from 5 ms to 30 s (the request timeout). */
const httpBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createGatewayMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const http = new Histogram({
    name: 'cg_http_request_duration_seconds',
    help: 'HTTP requests answered, by surface (origin), method, route pattern and status code',
    labelNames: ['surface', 'method', 'route', 'status_code'],
    buckets: httpBuckets,
    registers: [registry],
  });
  const hl7 = new Counter({
    name: 'cg_hl7_messages_total',
    help: 'HL7 messages answered, by version, transport, message type (v2 MSH-9, v3 interaction; "other" outside the accepted ones) and acknowledgement code or "refused"',
    labelNames: ['version', 'transport', 'message_type', 'outcome'],
    registers: [registry],
  });
  const associations = new Counter({
    name: 'cg_dicom_associations_total',
    help: 'DICOM associations requested of the listener, by outcome and rejection reason',
    labelNames: ['outcome', 'reason'],
    registers: [registry],
  });
  const instances = new Counter({
    name: 'cg_dicom_instances_total',
    help: 'DICOM instances received by C-STORE, by outcome (stored, duplicate of one stored, refused with a status, failed)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const fileCacheLookups = new Counter({
    name: 'cg_dicom_file_cache_lookups_total',
    help: 'Stored instances retrieved over WADO-RS, by how the stored-file cache answered: hit (from memory), miss (read, then held), bypass (read from disk as it is: too large, or the cache full); none while the cache is off',
    labelNames: ['outcome'],
    registers: [registry],
  });
  let watchedCache: StoredFileCache | undefined;
  new Gauge({
    name: 'cg_dicom_file_cache_bytes',
    help: 'Bytes of stored instances held in memory by the stored-file cache',
    registers: [registry],
    collect() {
      this.set(watchedCache?.bytes ?? 0);
    },
  });
  const watched = new WeakSet<Database>();
  return {
    registry,
    httpRequest(surface, method, route, statusCode, seconds) {
      http.observe({ surface, method, route: route ?? 'unmatched', status_code: String(statusCode) }, seconds);
    },
    hl7v2Message(transport, messageType, outcome) {
      hl7.inc({ version: 'v2', transport, message_type: hl7v2MessageType(messageType), outcome });
    },
    hl7v3Message(raw, outcome) {
      hl7.inc({ version: 'v3', transport: 'http', message_type: hl7v3Interaction(raw), outcome });
    },
    dicomAssociation(outcome, reason) {
      associations.inc({ outcome, reason: reason ?? '' });
    },
    dicomInstance(outcome) {
      instances.inc({ outcome });
    },
    dicomFileCacheLookup(outcome) {
      fileCacheLookups.inc({ outcome });
    },
    watchDicomFileCache(cache) {
      watchedCache = cache;
    },
    watchDatabase(database) {
      if (watched.has(database)) return;
      watched.add(database);
      observeDatabasePools(registry, database);
    },
  };
}

/** The metrics of a serving process: its registry, its database's pools, and its share of a cluster's scrape. */
export function processMetrics(database: Database): GatewayMetrics {
  const metrics = createGatewayMetrics();
  metrics.watchDatabase(database);
  offerToCluster(metrics.registry);
  return metrics;
}
