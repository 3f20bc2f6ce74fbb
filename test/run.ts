// Runs the whole suite, or the files and globs given. Without CG_TEST_DATABASE_URL it first starts
// one embedded PostgreSQL for the run, so that a fresh machine needs nothing installed; every test
// file then makes its own database on that server.
//
// Each file runs in a process of its own, which this runner watches: a file ends within its time
// limit, pass or fail. node's --test-timeout bounds one test, not the file: a socket or child left
// open by a failed before() or top-level await keeps a file's process alive for ever, and node's
// own runner waits for it. --test-force-exit ends a file once its tests are done; what is still
// running at the file's limit is killed, with its process group, and reported.
import { spawn, type ChildProcess } from 'node:child_process';
import { globSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { openEmbeddedPostgres, type EmbeddedPostgres } from '../src/storage/embedded-postgres.ts';

const root = join(import.meta.dirname, '..');
const concurrency = 2;
const testTimeoutMs = 300_000;
/** A file's own limit: over seven times the slowest file (test/admin/browser.test.ts, 116 s in .ci/run), well short of a stuck run. */
const fileLimitMs = Number(process.env.CG_TEST_FILE_TIMEOUT_S ?? 900) * 1000;
/** Past this a file is named as still running, and again every minute. */
const longRunningMs = 60_000;
const killGraceMs = 5_000;
/** Lines of each failed file's "failing tests" section repeated in the summary. */
const failingLinesKept = 40;

const patterns = process.argv.slice(2);
const files = [...new Set((patterns.length ? patterns : ['test/**/*.test.ts']).flatMap((pattern) => globSync(pattern, { cwd: root })))]
  .map((file) => relative(root, resolve(root, file)))
  .sort();
if (files.length === 0) {
  process.stderr.write(`no test files match ${patterns.join(' ')}\n`);
  process.exit(1);
}

let embedded: EmbeddedPostgres | undefined;
let dataDir: string | undefined;
const env: NodeJS.ProcessEnv = { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) };
if (!env.CG_TEST_DATABASE_URL) {
  dataDir = mkdtempSync(join(tmpdir(), 'cg-test-postgres-'));
  embedded = await openEmbeddedPostgres({
    dataDir,
    log: (message) => process.stderr.write(`${message}\n`),
    placed: (moved) => process.stdout.write(`embedded PostgreSQL placed where its user can reach it: ${JSON.stringify(moved)}\n`),
  });
  // Over loopback TCP rather than the server's Unix socket, so that the proxies some tests put
  // between the service and the database are in the path (test/storage/embedded-postgres.test.ts
  // covers the socket).
  const url = new URL(embedded.connectionString);
  url.pathname = '/postgres';
  url.searchParams.delete('host');
  env.CG_TEST_SERVER_URL = url.toString();
}

interface Outcome {
  file: string;
  seconds: number;
  /** Why the file failed as a whole, beyond failed tests: its exit status, signal or time limit. */
  failure?: string;
  /** The spec reporter's closing "failing tests" section, repeated under the run's summary. */
  failingTests?: string;
  counts: Record<'tests' | 'pass' | 'fail' | 'cancelled' | 'skipped' | 'todo', number>;
}

const running = new Map<string, { child: ChildProcess; started: number; minutesNamed: number }>();
const outcomes: Outcome[] = [];
const started = Date.now();

function runFile(file: string): Promise<Outcome> {
  const child = spawn(
    process.execPath,
    ['--test', '--test-isolation=none', '--test-force-exit', `--test-timeout=${testTimeoutMs}`, '--test-reporter=spec', file],
    // A process group of its own, so that what the file started goes with it when it is killed.
    { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const begun = Date.now();
  running.set(file, { child, started: begun, minutesNamed: 0 });
  const output: Buffer[] = [];
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));
  let limitReached = false;
  const limit = setTimeout(() => {
    limitReached = true;
    killGroup(child, 'SIGTERM');
    setTimeout(() => killGroup(child, 'SIGKILL'), killGraceMs).unref();
  }, fileLimitMs);
  return new Promise((resolve) => {
    child.on('close', (status, signal) => {
      clearTimeout(limit);
      running.delete(file);
      const text = Buffer.concat(output).toString();
      const plain = text.replace(/\u001b\[[0-9;]*m/g, '');
      const seconds = Math.round((Date.now() - begun) / 100) / 10;
      const outcome: Outcome = { file, seconds, counts: countsOf(plain), failingTests: failingTestsOf(plain) };
      if (limitReached) outcome.failure = `killed after ${fileLimitMs / 1000} s, its time limit (CG_TEST_FILE_TIMEOUT_S): something in it never ended`;
      else if (signal) outcome.failure = `its process died of ${signal}`;
      else if (outcome.counts.fail > 0 || outcome.counts.cancelled > 0) outcome.failure = `${outcome.counts.fail} failed, ${outcome.counts.cancelled} cancelled`;
      else if (status !== 0) outcome.failure = `exited with status ${status} without a failed test: it broke outside any test`;
      process.stdout.write(`\n━━ ${file} (${seconds} s)${outcome.failure ? `: FAILED, ${outcome.failure}` : ''}\n${text}`);
      resolve(outcome);
    });
  });
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

/** The totals the spec reporter prints last ("ℹ tests 12", "ℹ pass 11", ...), from its output without colours. */
function countsOf(plain: string): Outcome['counts'] {
  const counts: Outcome['counts'] = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
  for (const match of plain.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) {
    counts[match[1] as keyof Outcome['counts']] = Number(match[2]);
  }
  return counts;
}

/**
 * The reporter's "failing tests" section, without stack frames and cut short: a CI log often keeps
 * only its tail, and the summary is where the reason for a red run must be.
 */
function failingTestsOf(plain: string): string | undefined {
  const start = plain.indexOf('✖ failing tests:');
  if (start < 0) return undefined;
  const lines = plain.slice(start).split('\n').slice(1).filter((line) => !/^\s+at /.test(line));
  const kept = lines.slice(0, failingLinesKept);
  if (lines.length > kept.length) kept.push(`  … ${lines.length - kept.length} more lines in the file's output above`);
  return kept.join('\n').trim();
}

const stillRunning = setInterval(() => {
  const now = Date.now();
  for (const [file, run] of running) {
    const minutes = Math.floor((now - run.started) / longRunningMs);
    if (minutes > run.minutesNamed) {
      run.minutesNamed = minutes;
      process.stdout.write(`… still running: ${file} (${minutes} min)\n`);
    }
  }
}, 1_000);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    for (const { child } of running.values()) killGroup(child, 'SIGTERM');
  });
}

const queue = [...files];
await Promise.all(
  Array.from({ length: Math.min(concurrency, files.length) }, async () => {
    for (let file = queue.shift(); file !== undefined && !stopping; file = queue.shift()) outcomes.push(await runFile(file));
  }),
);
clearInterval(stillRunning);
await finish();

async function finish(): Promise<never> {
  await embedded?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  // A data folder placed outside the temporary one (a private TMPDIR, as root) goes with it.
  if (embedded && dataDir && !embedded.pgdata.startsWith(dataDir)) rmSync(dirname(embedded.pgdata), { recursive: true, force: true });
  const total = (key: keyof Outcome['counts']) => outcomes.reduce((sum, outcome) => sum + outcome.counts[key], 0);
  const failed = outcomes.filter((outcome) => outcome.failure);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  process.stdout.write(
    [
      '',
      `files ${outcomes.length} of ${files.length}, failed ${failed.length}`,
      `tests ${total('tests')}, pass ${total('pass')}, fail ${total('fail')}, cancelled ${total('cancelled')}, skipped ${total('skipped')}, todo ${total('todo')}`,
      `duration ${minutes} min; slowest: ${[...outcomes].sort((a, b) => b.seconds - a.seconds).slice(0, 3).map((o) => `${o.file} ${o.seconds} s`).join(', ')}`,
      ...failed.map((outcome) => `✖ ${outcome.file}: ${outcome.failure}`),
      ...failed.filter((outcome) => outcome.failingTests).map((outcome) => `\n✖ ${outcome.file}, its failing tests:\n${outcome.failingTests}`),
      '',
    ].join('\n'),
  );
  process.exit(stopping ? 130 : failed.length > 0 || outcomes.length < files.length ? 1 : 0);
}
