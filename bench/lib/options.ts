import { parseArgs } from 'node:util';

/** What one `npm run bench [-- options]` does. --quick is a smoke check: small data, one run. */
export interface BenchOptions {
  quick: boolean;
  /** Repetitions of every measurement; the report gives their median, min and max. */
  runs: number;
  /** Seconds of load per HTTP measurement. */
  httpSeconds: number;
  concurrencies: number[];
  /** Messages per MLLP measurement (bounded by count, and by mllpSeconds). */
  mllpMessages: number;
  mllpSeconds: number;
  dataset: DatasetSize;
  dicom: { smallCount: number; largeCount: number; largeFrames: number[]; hugeFrames: number; associations: number[]; queryStudies: number };
  scenarios: Set<ScenarioGroup>;
  /** CG_WORKERS values the service runs with, side by side (its HTTP and MLLP baselines get the same count). */
  workers: number[];
  launcher: 'serve' | 'dev-serve';
  /** CG_LOG_LEVEL of the service under test: the product default (info) unless told otherwise. */
  logLevel: string;
  /** Directory for V8 CPU profiles of the service (node --cpu-prof), when profiling. */
  cpuProfileDir?: string;
  /** Base name of the result files under bench/results (latest, or quick for --quick). */
  output: string;
}

/** fhir includes the Bulk Data export; fhir-export runs that one alone (on the same data set). */
export type ScenarioGroup = 'fhir' | 'fhir-export' | 'mllp' | 'dicom' | 'query';

export interface DatasetSize {
  name: string;
  patients: number;
  observationsPerPatient: number;
  otherSites: number;
  otherSitePatients: number;
}

const usage = `usage: npm run bench [-- --quick] [--runs N] [--seconds S] [--only fhir,fhir-export,mllp,dicom,query] [--query-studies N] [--workers 1,2] [--log-level L] [--dev-serve] [--cpu-prof DIR] [--output NAME]`;

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      runs: { type: 'string' },
      seconds: { type: 'string' },
      only: { type: 'string' },
      workers: { type: 'string', default: '1,2' },
      'dev-serve': { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'info' },
      'cpu-prof': { type: 'string' },
      output: { type: 'string' },
      'query-studies': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  const quick = values.quick === true;
  const positive = (raw: string | undefined, fallback: number, name: string) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const groups: ScenarioGroup[] = ['fhir', 'fhir-export', 'mllp', 'dicom', 'query'];
  const only = values.only?.split(',').map((item) => item.trim()).filter(Boolean) ?? groups.filter((group) => group !== 'fhir-export');
  for (const item of only) if (!groups.includes(item as ScenarioGroup)) throw new Error(`--only takes ${groups.join(', ')}`);
  const workers = [...new Set((values.workers ?? '1,2').split(',').map((item) => Number(item.trim())))];
  if (workers.length === 0 || workers.some((count) => !Number.isInteger(count) || count < 1 || count > 64)) throw new Error('--workers takes worker counts from 1 to 64, e.g. 1,2');
  return {
    quick,
    workers,
    runs: Math.round(positive(values.runs, quick ? 1 : 3, 'runs')),
    httpSeconds: positive(values.seconds, quick ? 1 : 5, 'seconds'),
    concurrencies: [1, 16, 64],
    mllpMessages: quick ? 200 : 3000,
    mllpSeconds: quick ? 3 : 20,
    dataset: quick
      ? { name: 'quick', patients: 2_000, observationsPerPatient: 10, otherSites: 2, otherSitePatients: 200 }
      : { name: 'full', patients: 100_000, observationsPerPatient: 10, otherSites: 10, otherSitePatients: 2_000 },
    // PS3.5 pixel data of 512x512x16 bit is 512 KiB a frame: 20-60 frames give 10-30 MB, 600 about 300 MB.
    dicom: quick
      ? { smallCount: 30, largeCount: 2, largeFrames: [20, 30], hugeFrames: 60, associations: [1, 4], queryStudies: Math.round(positive(values['query-studies'], 2_000, 'query-studies')) }
      : { smallCount: 500, largeCount: 20, largeFrames: [20, 30, 40, 50, 60], hugeFrames: 600, associations: [1, 4], queryStudies: Math.round(positive(values['query-studies'], 100_000, 'query-studies')) },
    scenarios: new Set(only as ScenarioGroup[]),
    launcher: values['dev-serve'] ? 'dev-serve' : 'serve',
    logLevel: values['log-level'] ?? 'info',
    ...(values['cpu-prof'] ? { cpuProfileDir: values['cpu-prof'] } : {}),
    output: values.output ?? (quick ? 'quick' : 'latest'),
  };
}
