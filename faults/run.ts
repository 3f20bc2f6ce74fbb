// `npm run test:faults`: the reliability and security campaign (issue 9). Runs each scenario in
// turn against the real service process on loopback, each bounded in time, writes the figures to
// faults/results/latest.md and exits non-zero when any check failed.
//
//   node faults/run.ts                      every scenario, full counts
//   node faults/run.ts crash isolation      only these scenarios (by id prefix)
//   FAULTS_SCALE=0.1 node faults/run.ts     smaller counts, for development
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivatePostgres } from './harness/private-postgres.ts';
import { newReport, type Scenario, type ScenarioReport } from './harness/scenario.ts';
import { DeadlineError, withDeadline } from './harness/timing.ts';
import { renderResults, type ScenarioOutcome } from './results/render.ts';
import { scenarios } from './scenarios/index.ts';

const filters = process.argv.slice(2);
const scale = Number(process.env.FAULTS_SCALE ?? '1');
const keep = process.env.FAULTS_KEEP === '1';
const selected: Scenario[] = filters.length ? scenarios.filter((s) => filters.some((f) => s.id.startsWith(f))) : scenarios;
if (selected.length === 0) {
  process.stderr.write(`no scenario matches ${filters.join(' ')}; known: ${scenarios.map((s) => s.id).join(', ')}\n`);
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), 'cg-faults-'));
const log = (message: string) => process.stderr.write(`[faults ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
log(`working directory ${root}; scale ${scale}`);
const postgres = await startPrivatePostgres();
log(`private PostgreSQL 15 on 127.0.0.1:${postgres.port}`);

const outcomes: ScenarioOutcome[] = [];
const started = Date.now();
for (const scenario of selected) {
  const workDir = join(root, scenario.id);
  mkdirSync(workDir, { recursive: true });
  const report: ScenarioReport = newReport();
  const t0 = Date.now();
  log(`scenario ${scenario.id}: ${scenario.title}`);
  let error: string | undefined;
  try {
    await withDeadline(scenario.budgetMs, `scenario ${scenario.id}`, scenario.run({ workDir, postgres, scale, log: (m) => log(`  ${scenario.id}: ${m}`) }, report));
  } catch (caught) {
    error = caught instanceof DeadlineError ? caught.message : `${(caught as Error).stack ?? caught}`;
    log(`scenario ${scenario.id} aborted: ${error}`);
  }
  // The outage scenario may have left the server stopped if it was aborted half-way.
  try {
    postgres.start();
  } catch {
    // already running
  }
  const outcome: ScenarioOutcome = { scenario, report, durationMs: Date.now() - t0, ...(error ? { error } : {}) };
  outcomes.push(outcome);
  const failed = report.checks.filter((c) => !c.ok);
  log(`scenario ${scenario.id}: ${error || failed.length ? 'FAILED' : 'passed'} in ${Math.round(outcome.durationMs / 1000)} s`);
  for (const c of failed) log(`    failed: ${c.name}: ${c.detail}`);
}

postgres.destroy();
if (!keep) rmSync(root, { recursive: true, force: true });
const markdown = renderResults(outcomes, { scale, totalMs: Date.now() - started, partial: filters.length > 0 });
const resultsDir = join(import.meta.dirname, 'results');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, filters.length > 0 || scale !== 1 ? 'partial.md' : 'latest.md'), markdown);
const failures = outcomes.filter((o) => o.error || o.report.checks.some((c) => !c.ok));
log(`${outcomes.length - failures.length}/${outcomes.length} scenarios passed in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(failures.length ? 1 : 0);
