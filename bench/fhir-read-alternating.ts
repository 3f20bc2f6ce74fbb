import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { syntheticId } from './dataset/synthetic.ts';
import { alternatingArguments, runAlternating, ticksPerSecond, type AlternatingWindow, type SystemName } from './lib/alternating.ts';
import { httpAnswers, startChild } from './lib/child.ts';
import { startGatewayProcess } from './lib/gateway-process.ts';
import { baselinePorts, benchHost, refreshPorts } from './lib/ports.ts';
import { serviceProcesses, treeOf, treeTicks } from './lib/process-tree.ts';
import { existingSites, provisionSite } from './lib/provision.ts';
import { runHttpLoad } from './load/http-load.ts';

/**
 * FHIR read by id, one version of the service against another, in alternating rounds (a full
 * bench run cannot resolve a change of a few percent on a shared machine). Both services run at
 * once on the quick data set's embedded PostgreSQL (`npm run bench -- --quick --only fhir` makes
 * it), with baseline (a) beside them; each round loads each in turn (the order reversed every
 * other round), baseline (a) last, and gives the throughput, the CPU per read of the service's
 * own processes and of every PostgreSQL process, and the data access records per INSERT
 * (counted by the rows' transaction ids).
 *
 * `node bench/fhir-read-alternating.ts BEFORE_ROOT [ROUNDS] [SECONDS] [CONNECTIONS] [WORKERS]`:
 * BEFORE_ROOT is a checkout of the other version (`git archive COMMIT | tar -x -C DIR`, with
 * node_modules linked); "after" is this checkout. WORKERS (default 1) is CG_WORKERS of both
 * services and baseline (a)'s cluster workers; the CPU of a service is that of its whole process
 * tree (supervisor and workers) less PostgreSQL. AFTER_LOG_LEVEL sets the "after" service's
 * CG_LOG_LEVEL (default info, as "before"): at warn it writes no access line, which sizes that
 * line's cost.
 */
const { beforeRoot, rounds, seconds, connections, more } = alternatingArguments('bench/fhir-read-alternating.ts', 64, '[WORKERS]');
const workers = Number(more[0] ?? 1);
const quickPatients = 2_000;
const root = resolve('.');
const work = join(root, 'bench', 'scratch', 'fhir-read-alternating');
mkdirSync(work, { recursive: true });

const before = await startGatewayProcess({ root: resolve(beforeRoot), dataDir: join(root, 'bench', 'scratch', 'dataset-quick'), logFile: join(work, 'before.log'), logLevel: 'info', launcher: 'serve', workers });
const after = await startGatewayProcess({ root, dataDir: join(work, 'node-after'), databaseUrl: before.databaseUrl, logFile: join(work, 'after.log'), logLevel: process.env.AFTER_LOG_LEVEL ?? 'info', launcher: 'serve', workers });
const site = await provisionSite(root, before.env, await existingSites(before.databaseUrl), 'bench-main', 'BENCHMAIN');
await refreshPorts();
const baseline = await startChild({
  command: process.execPath,
  args: ['bench/baselines/http-baseline.ts'],
  cwd: root,
  env: { ...process.env, BENCH_DATABASE_URL: before.databaseUrl, BENCH_SITE_ID: site.id, BENCH_BASELINE_PORT: String(baselinePorts.http), BENCH_BASELINE_WORKERS: String(workers) },
  logFile: join(work, 'baseline.log'),
  ready: httpAnswers(`http://${benchHost}:${baselinePorts.http}/`),
});
const stats = new pg.Client({ connectionString: before.databaseUrl });
stats.on('error', () => {});
await stats.connect();

const systems: Record<SystemName, { port: number; pid: number }> = {
  before: { port: before.surfaces.get('fhir')!.port, pid: before.pid },
  after: { port: after.surfaces.get('fhir')!.port, pid: after.pid },
  baseline: { port: baselinePorts.http, pid: baseline.pid },
};

async function recordsPerInsert(from: Date, to: Date): Promise<number> {
  // The last records of the window are written within the recorder's gathering time.
  await new Promise((resolve) => setTimeout(resolve, 400));
  const { rows } = await stats.query<{ records: number; inserts: number }>(
    'SELECT count(*)::int AS records, count(DISTINCT xmin::text)::int AS inserts FROM data_access_audit WHERE occurred_at >= $1 AND occurred_at < $2',
    [from, to],
  );
  return rows[0]!.inserts > 0 ? rows[0]!.records / rows[0]!.inserts : 0;
}

interface Window extends AlternatingWindow {
  failed: number;
  recordsPerInsert: number;
}

async function load(name: SystemName, durationSeconds: number): Promise<Window> {
  const system = systems[name];
  const own = serviceProcesses(system.pid);
  const from = new Date();
  const ownBefore = treeTicks(own);
  const postgresBefore = treeTicks(treeOf([before.postgresPid!]));
  const result = await runHttpLoad({
    baseUrl: `http://${benchHost}:${system.port}`,
    connections,
    seconds: durationSeconds,
    method: 'GET',
    headers: { 'x-api-key': site.apiKey },
    next: () => ({ path: `/fhir/Patient/${syntheticId('patient', site.id, 1 + Math.floor(Math.random() * quickPatients))}` }),
  });
  const msPerRead = (ticks: number) => (ticks / ticksPerSecond / Math.max(1, result.ok)) * 1000;
  const serviceMs = msPerRead(treeTicks(own) - ownBefore);
  const postgresMs = msPerRead(treeTicks(treeOf([before.postgresPid!])) - postgresBefore);
  return { perSecond: result.requestsPerSecond, failed: result.failed, serviceMs, postgresMs, recordsPerInsert: name === 'baseline' ? 0 : await recordsPerInsert(from, new Date()) };
}

try {
  await runAlternating({
    rounds,
    seconds,
    warmSeconds: 1,
    load,
    unit: 'read',
    extra: (w) => `${w.recordsPerInsert ? ` ${w.recordsPerInsert.toFixed(0)} records/INSERT` : ''}${w.failed ? ` FAILED ${w.failed}` : ''}`,
  });
} finally {
  await stats.end().catch(() => {});
  await baseline.stop();
  await after.stop();
  await before.stop();
}
process.exit(0);
