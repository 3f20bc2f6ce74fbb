import type { ProcessUsage } from '../lib/process-monitor.ts';
import { summarize } from '../lib/stats.ts';
import type { Measurement } from './model.ts';

/** What one run of a load yields, whatever the protocol. */
export interface RunFigures {
  throughput: number;
  p50?: number;
  p95?: number;
  p99?: number;
  mbPerSecond?: number;
  failed: number;
}

/**
 * The runs of one configuration, collected as they happen (runs of the gateway and of its
 * baseline are interleaved, so that noise from the shared machine hits both alike).
 */
export class Series {
  readonly #runs: { figures: RunFigures; usage: ProcessUsage }[] = [];
  readonly #notes = new Set<string>();

  readonly scenario: string;
  readonly system: string;
  readonly concurrency: number;
  readonly unit: string;
  readonly workers: number;

  constructor(scenario: string, system: string, concurrency: number, unit: string, workers = 1) {
    this.scenario = scenario;
    this.system = system;
    this.concurrency = concurrency;
    this.unit = unit;
    this.workers = workers;
  }

  add(figures: RunFigures, usage: ProcessUsage): void {
    this.#runs.push({ figures, usage });
  }

  note(text: string): void {
    this.#notes.add(text);
  }

  get size(): number {
    return this.#runs.length;
  }

  toMeasurement(): Measurement {
    const pick = (get: (run: { figures: RunFigures; usage: ProcessUsage }) => number | undefined) =>
      summarize(this.#runs.map((run) => get(run) ?? Number.NaN));
    const measurement: Measurement = {
      scenario: this.scenario,
      system: this.system,
      concurrency: this.concurrency,
      workers: this.workers,
      unit: this.unit,
      throughput: pick((run) => run.figures.throughput),
      peakRssMb: pick((run) => run.usage.peakRssMb),
      peakPssMb: pick((run) => run.usage.peakPssMb),
      cpuPercent: pick((run) => run.usage.cpuPercent),
      failed: this.#runs.reduce((sum, run) => sum + run.figures.failed, 0),
    };
    // CPU percent of one core over items a second: CPU milliseconds per item.
    const perItem = (percent: number | undefined, throughput: number) => (percent === undefined || !(throughput > 0) ? undefined : (10 * percent) / throughput);
    measurement.cpuMsPerItem = { system: pick((run) => perItem(run.usage.cpuPercent, run.figures.throughput)) };
    if (this.#runs.some((run) => run.usage.postgresCpuPercent !== undefined)) {
      measurement.postgresCpuPercent = pick((run) => run.usage.postgresCpuPercent);
      measurement.cpuMsPerItem.postgres = pick((run) => perItem(run.usage.postgresCpuPercent, run.figures.throughput));
    }
    if (this.#runs.some((run) => run.figures.p50 !== undefined)) {
      measurement.latencyMs = { p50: pick((run) => run.figures.p50), p95: pick((run) => run.figures.p95), p99: pick((run) => run.figures.p99) };
    }
    if (this.#runs.some((run) => run.figures.mbPerSecond !== undefined)) measurement.mbPerSecond = pick((run) => run.figures.mbPerSecond);
    if (this.#notes.size > 0) measurement.notes = [...this.#notes];
    return measurement;
  }
}
