import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Summary } from '../lib/stats.ts';
import type { BenchResults, Measurement } from './model.ts';
import { retiredMllpTarget } from './targets.ts';

/**
 * bench/results/latest.json (everything) and latest.md (tables only: why a target is met or
 * missed, measured, is prose in docs/performance.md, which this run's figures do not rewrite).
 */
export function writeResults(dir: string, results: BenchResults, name: string): { json: string; markdown: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${name}.json`);
  const markdown = join(dir, `${name}.md`);
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(markdown, renderMarkdown(results));
  return { json, markdown };
}

function fmt(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return value >= 100 ? value.toFixed(0) : value.toFixed(digits);
}

function spread(summary: Summary | undefined, digits = 1): string {
  if (!summary || !Number.isFinite(summary.median)) return '–';
  if (summary.runs.length <= 1) return fmt(summary.median, digits);
  return `${fmt(summary.median, digits)} (${fmt(summary.min, digits)}–${fmt(summary.max, digits)})`;
}

const scenarioTitles: Record<string, string> = {
  'fhir.read': 'FHIR read by id (GET /fhir/Patient/{id})',
  'fhir.search-identifier': 'FHIR search by identifier (GET /fhir/Patient?identifier=system|value)',
  'fhir.search-name': 'FHIR search by name substring (GET /fhir/Patient?name=…)',
  'fhir.search-patient-code': 'FHIR search by patient and code (GET /fhir/Observation?patient=…&code=…)',
  'fhir.search-patient-code-include': 'FHIR search by patient and code with the patient included (…&_include=Observation:patient)',
  'fhir.create': 'FHIR create (POST /fhir/Patient)',
  'fhir.update': 'FHIR update (PUT /fhir/Patient/{id})',
  'mllp.adt': 'HL7 v2 ADT^A01 over MLLP, ACK after commit',
  'mllp.oru': 'HL7 v2 ORU^R01 (5 OBX) over MLLP, ACK after commit',
  'dicom.small': 'DICOM C-STORE, small set (CT 256x256, ~130 KB each)',
  'dicom.large': 'DICOM C-STORE, large set (multi-frame 512x512, 10–30 MB each)',
  'dicom.huge': 'DICOM C-STORE, one ~300 MB instance (memory)',
};

export function renderMarkdown(results: BenchResults): string {
  const { machine } = results;
  const lines: string[] = [];
  lines.push(`# Benchmark results (${results.mode})`, '');
  lines.push(
    `Measured ${machine.date} on commit \`${machine.commit}\`${machine.dirty ? ' (with uncommitted changes)' : ''}: ${machine.cores} cores (${machine.cpuModel}), ` +
      `${machine.memoryGb} GB, Linux ${machine.kernel}, Node ${machine.node}; ${results.database}; service started with \`${results.launcher === 'serve' ? 'clinical-gateway serve' : 'bench/lib/dev-serve.ts (surfaces not yet in the catalogue)'}\`. ` +
      `Every figure is the median of ${results.runs} run(s), with min–max in parentheses; the gateway and its baseline ran in turn in the same run. Total bench time ${Math.round(results.durationSeconds)} s.`,
    '',
  );
  if (machine.loadAverage) {
    const { start, end } = machine.loadAverage;
    const busy = Math.max(start, end ?? 0) > machine.cores;
    lines.push(
      `Load average (1 min) ${start} at the start${end !== undefined ? `, ${end} at the end` : ''}, on ${machine.cores} cores${busy ? ': other work shared the machine during this run, so absolute figures are low and ratios noisier than on a quiet machine' : ''}.`,
      '',
    );
  }
  const workerCounts = (results.settings.workers as number[] | undefined) ?? [1];
  lines.push(
    `The service ran with CG_WORKERS=${workerCounts.join(' and CG_WORKERS=')}, each group of scenarios with every count in turn. "Workers" is the pass's CG_WORKERS: baselines (a) and (b) (HTTP and MLLP) ran with as many worker processes; Orthanc, storescp and the frame-and-ACK server are one process each, measured again in each pass. CPU % is of one core, of the system's whole process tree (supervisor and workers); "PG CPU %" is the PostgreSQL server's processes meanwhile; ms/item divides CPU time by items served (requests, messages, instances).`,
    '',
  );
  const settings = results.settings.gatewaySettings as Record<string, string> | undefined;
  if (settings) lines.push(`The service ran with settings other than its defaults (BENCH_GATEWAY_ENV): ${Object.entries(settings).map(([name, value]) => `${name}=${value}`).join(', ')}.`, '');
  const merged = results.settings.mergedFrom as { date: string; commit?: string; scenarios: string[] }[] | undefined;
  if (merged) {
    lines.push(`Measured in ${merged.length} invocations, each with its own baselines: ${merged.map((part) => `${part.scenarios.join(', ')} at ${part.date}${part.commit ? ` on commit \`${part.commit}\`` : ''}`).join('; ')}.`, '');
  }
  lines.push(`Data set: ${Object.entries(results.dataset).map(([key, value]) => `${key} ${typeof value === 'number' ? value.toLocaleString('en-US') : String(value)}`).join(', ')}.`, '');
  lines.push('## Targets', '', '| Target | Value | Baseline | Ratio | Wanted | Met |', '|---|---|---|---|---|---|');
  for (const target of results.targets) {
    lines.push(
      `| ${target.name} | ${fmt(target.value, 2)} ${target.unit} | ${target.baseline === null ? '–' : `${fmt(target.baseline)} ${target.unit}`} | ${target.ratio === null ? '–' : `${target.ratio.toFixed(2)}x`} | ${target.target} | ${target.met ? 'yes' : '**no**'} |`,
    );
  }
  const explained = results.targets.filter((t) => t.explanation);
  if (explained.length > 0) lines.push('', ...explained.map((target) => `- ${target.name}: ${target.explanation}`));
  lines.push('', `Retired: ${retiredMllpTarget}.`);
  lines.push('', 'Why each target is met or missed, measured: docs/performance.md, "Why each target is met or missed".');
  lines.push(...scaling(results.measurements, workerCounts));
  const byScenario = new Map<string, Measurement[]>();
  for (const m of results.measurements) byScenario.set(m.scenario, [...(byScenario.get(m.scenario) ?? []), m]);
  lines.push('', '## Figures', '');
  for (const [scenario, list] of byScenario) {
    const unit = list[0]!.unit;
    const dicom = scenario.startsWith('dicom.');
    const concurrencyName = dicom ? 'Associations' : 'Connections';
    lines.push(`### ${scenarioTitles[scenario] ?? scenario}`, '');
    const cost = (m: Measurement) => `${spread(m.cpuPercent, 0)} | ${spread(m.postgresCpuPercent, 0)} | ${spread(m.cpuMsPerItem?.system, 2)} | ${spread(m.cpuMsPerItem?.postgres, 2)}`;
    const costHeads = 'CPU % | PG CPU % | CPU ms/item | PG ms/item';
    if (dicom) {
      lines.push(`| System | Workers | ${concurrencyName} | ${unit} | MB/s | Peak RSS MB | Peak PSS MB | ${costHeads} | Failed |`, '|---|---|---|---|---|---|---|---|---|---|---|---|');
    } else {
      lines.push(`| System | Workers | ${concurrencyName} | ${unit} | p50 ms | p95 ms | p99 ms | Peak RSS MB | Peak PSS MB | ${costHeads} | Failed |`, '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    }
    for (const m of [...list].sort((a, b) => a.concurrency - b.concurrency || (a.workers ?? 1) - (b.workers ?? 1) || a.system.localeCompare(b.system))) {
      const workers = m.workers ?? 1;
      if (dicom) {
        lines.push(`| ${m.system} | ${workers} | ${m.concurrency} | ${spread(m.throughput)} | ${spread(m.mbPerSecond)} | ${spread(m.peakRssMb, 0)} | ${spread(m.peakPssMb, 0)} | ${cost(m)} | ${m.failed} |`);
      } else {
        lines.push(
          `| ${m.system} | ${workers} | ${m.concurrency} | ${spread(m.throughput)} | ${spread(m.latencyMs?.p50, 2)} | ${spread(m.latencyMs?.p95, 2)} | ${spread(m.latencyMs?.p99, 2)} | ${spread(m.peakRssMb, 0)} | ${spread(m.peakPssMb, 0)} | ${cost(m)} | ${m.failed} |`,
        );
      }
    }
    const scenarioNotes = list.flatMap((m) => (m.notes ?? []).map((note) => `${m.system} (workers ${m.workers ?? 1}, ${m.concurrency}): ${note}`));
    if (scenarioNotes.length > 0) lines.push('', ...scenarioNotes.map((note) => `- ${note}`));
    lines.push('');
  }
  if (results.skipped.length > 0) {
    lines.push('## Not measured in this run', '');
    for (const skipped of results.skipped) lines.push(`- ${skipped.scenario}: ${skipped.reason}`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * How the service's throughput grows from the first worker count to the others, per scenario
 * and concurrency, with where the CPU went (the service's tree, PostgreSQL) and the same growth of
 * the baseline measured beside it: a baseline that grows alike says the machine is the limit.
 */
function scaling(measurements: Measurement[], workerCounts: number[]): string[] {
  if (workerCounts.length < 2) return [];
  const [first, ...others] = workerCounts as [number, ...number[]];
  const lines = ['', `## Scaling from ${first} to ${others.join(', ')} worker(s)`, ''];
  lines.push(
    `| Scenario | Concurrency | System | ${workerCounts.map((w) => `${w} w`).join(' | ')} | Growth | CPU % (service / PG) at ${workerCounts.join(', ')} w |`,
    `|---|---|---|${workerCounts.map(() => '---|').join('')}---|---|`,
  );
  const key = (m: Measurement) => `${m.scenario}|${m.concurrency}|${m.system}`;
  const groups = new Map<string, Map<number, Measurement>>();
  for (const m of measurements) {
    if (m.throughput.runs.length === 0 || ['storescp', 'mllp-baseline', 'orthanc'].includes(m.system)) continue;
    const entry = groups.get(key(m)) ?? new Map<number, Measurement>();
    entry.set(m.workers ?? 1, m);
    groups.set(key(m), entry);
  }
  for (const [name, byWorkers] of groups) {
    const base = byWorkers.get(first);
    const last = byWorkers.get(others[others.length - 1]!);
    if (!base || !last) continue;
    const [scenario, concurrency, system] = name.split('|');
    const growth = base.throughput.median > 0 ? `${(last.throughput.median / base.throughput.median).toFixed(2)}x` : '–';
    const cpu = workerCounts.map((w) => {
      const m = byWorkers.get(w);
      return m ? `${fmt(m.cpuPercent.median, 0)} / ${fmt(m.postgresCpuPercent?.median, 0)}` : '–';
    });
    lines.push(`| ${scenario} | ${concurrency} | ${system} | ${workerCounts.map((w) => fmt(byWorkers.get(w)?.throughput.median)).join(' | ')} | ${growth} | ${cpu.join('; ')} |`);
  }
  lines.push('', 'Orthanc, storescp and the frame-and-ACK server do not change with CG_WORKERS and are left out of this table; their figures per pass are under Figures.');
  return lines;
}
