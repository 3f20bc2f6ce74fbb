import type { MachineInfo } from '../lib/machine.ts';
import type { Summary } from '../lib/stats.ts';

/** One figure of the report: a system under load (the gateway or a baseline) in one configuration. */
export interface Measurement {
  /** Scenario key, e.g. fhir.read, mllp.adt, dicom.small. */
  scenario: string;
  /** What ran: gateway, baseline-a, baseline-b, mllp-baseline, orthanc, storescp. */
  system: string;
  /** Concurrency: HTTP connections, MLLP connections or DICOM associations. */
  concurrency: number;
  /**
   * CG_WORKERS of the service in the pass this was measured in. Baselines (a) and (b), HTTP and
   * MLLP, ran with as many worker processes; Orthanc, storescp and the frame-and-ACK server are
   * what they are (one process) and were measured again in each pass, beside the service.
   */
  workers: number;
  unit: string;
  throughput: Summary;
  latencyMs?: { p50: Summary; p95: Summary; p99: Summary };
  mbPerSecond?: Summary;
  peakRssMb: Summary;
  /** Peak proportional set size of the tree (shared pages counted once): see ProcessUsage. */
  peakPssMb?: Summary;
  /** CPU of the system's process tree (a supervisor and its workers), in percent of one core. */
  cpuPercent: Summary;
  /** CPU of the PostgreSQL server's processes meanwhile, when it runs on this machine. */
  postgresCpuPercent?: Summary;
  /** CPU milliseconds per request, message or instance: the system's own, and PostgreSQL's. */
  cpuMsPerItem?: { system: Summary; postgres?: Summary };
  /** Failed requests/messages/instances over all runs (non-2xx, non-AA, non-success). */
  failed: number;
  notes?: string[];
}

export interface Target {
  name: string;
  value: number | null;
  baseline: number | null;
  ratio: number | null;
  /** Human-readable target, e.g. ">= 0.6x baseline (a)" or "< 20 ms". */
  target: string;
  met: boolean;
  unit: string;
  explanation?: string;
}

export interface BenchResults {
  mode: 'full' | 'quick';
  machine: MachineInfo;
  launcher: 'serve' | 'dev-serve';
  database: string;
  dataset: Record<string, unknown>;
  runs: number;
  settings: Record<string, unknown>;
  measurements: Measurement[];
  targets: Target[];
  skipped: { scenario: string; reason: string }[];
  durationSeconds: number;
}
