import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BenchResults } from './report/model.ts';
import { computeTargets } from './report/targets.ts';
import { writeResults } from './report/write-results.ts';

/**
 * Merges result files of separate invocations (e.g. `--only fhir,mllp` then `--only dicom`) into
 * one report, recomputing the targets: `node bench/merge-results.ts OUT IN1.json IN2.json …`.
 * Each figure still compares the service with a baseline measured in the same invocation.
 */
const [output, ...inputs] = process.argv.slice(2);
if (!output || inputs.length === 0) {
  process.stderr.write('usage: node bench/merge-results.ts OUTPUT_NAME RESULTS.json...\n');
  process.exit(2);
}
const parts = inputs.map((file) => JSON.parse(readFileSync(resolve(file), 'utf8')) as BenchResults);
const first = parts[0]!;
const measurements = parts.flatMap((part) => part.measurements);
const merged: BenchResults = {
  ...first,
  measurements,
  skipped: parts.flatMap((part) => part.skipped),
  settings: parts.length === 1 ? first.settings : { ...first.settings, scenarios: parts.flatMap((part) => (part.settings.scenarios as string[]) ?? []), mergedFrom: parts.map((part) => ({ date: part.machine.date, commit: part.machine.commit, scenarios: part.settings.scenarios })) },
  targets: computeTargets(measurements, { fullDataset: first.mode === 'full' }),
  durationSeconds: parts.reduce((sum, part) => sum + part.durationSeconds, 0),
};
const written = writeResults(join(import.meta.dirname, 'results'), merged, output);
process.stdout.write(`written ${written.json} and ${written.markdown}\n`);
