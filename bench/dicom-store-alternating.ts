import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { beforeRootAndNumbers, runAlternating, ticksPerSecond, type AlternatingWindow } from './lib/alternating.ts';
import { startGatewayProcess, type GatewayProcess } from './lib/gateway-process.ts';
import { benchHost } from './lib/ports.ts';
import { serviceProcesses, treeOf, treeTicks } from './lib/process-tree.ts';
import { ensureSites } from './lib/provision.ts';
import { smallSet } from './load/dicom-data.ts';
import { runStorescu } from './load/storescu.ts';

/**
 * C-STORE of the small set, one version of the service against another, in alternating rounds
 * (a full bench run cannot resolve a change of a few percent on a shared machine). Both services
 * run at once, each with CG_WORKERS workers, on one embedded PostgreSQL (the first one's); each
 * round stores the whole set into a new site of each in turn, the order reversed every other
 * round, and gives the throughput and the CPU per instance of the service's own processes and of
 * every PostgreSQL process.
 *
 * `node bench/dicom-store-alternating.ts BEFORE_ROOT [ROUNDS] [ASSOCIATIONS] [WORKERS] [COUNT]`:
 * BEFORE_ROOT is a checkout of the other version (`git archive COMMIT | tar -x -C DIR`, with
 * node_modules linked); "after" is this checkout.
 */
const { beforeRoot, numbers } = beforeRootAndNumbers('bench/dicom-store-alternating.ts', [['rounds', 6], ['associations', 4], ['workers', 1], ['count', 500]]);
const { rounds, associations, workers, count } = numbers;
const root = resolve('.');
const work = join(root, 'bench', 'scratch', 'dicom-store-alternating');
mkdirSync(work, { recursive: true });
const set = await smallSet(join(root, 'bench', 'scratch', 'sets'), count);

const before = await startGatewayProcess({ root: resolve(beforeRoot), dataDir: join(work, 'node-before'), logFile: join(work, 'before.log'), logLevel: 'info', launcher: 'serve', workers });
// AB_CPU_PROF=DIR: a V8 CPU profile of "after" (bench/profile-summary.ts reads it).
const cpuProfileDir = process.env.AB_CPU_PROF ? { cpuProfileDir: resolve(process.env.AB_CPU_PROF) } : {};
const after = await startGatewayProcess({ root, dataDir: join(work, 'node-after'), databaseUrl: before.databaseUrl, logFile: join(work, 'after.log'), logLevel: 'info', launcher: 'serve', workers, ...cpuProfileDir });
const stats = new pg.Client({ connectionString: before.databaseUrl });
stats.on('error', () => {});
await stats.connect();

type StoreSystem = 'before' | 'after';
const systems: Record<StoreSystem, GatewayProcess> = { before, after };

interface Window extends AlternatingWindow {
  failed: number;
}

let siteCounter = 0;
async function load(name: StoreSystem): Promise<Window> {
  const system = systems[name];
  const aeTitle = `AB${process.pid % 10000}${String(++siteCounter).padStart(4, '0')}`;
  const [site] = await ensureSites(before.databaseUrl, [], [{ name: `ab-dicom-${aeTitle}`, aeTitle }]);
  const own = serviceProcesses(system.pid);
  const ownBefore = treeTicks(own);
  const postgresBefore = treeTicks(treeOf([before.postgresPid!]));
  const result = await runStorescu({
    host: benchHost, port: system.surfaces.get('dicom')!.port, calledAet: site!.aeTitle, callingAet: 'BENCHSCU',
    files: set.files, associations, logDir: work, label: name, timeoutSeconds: 600,
  });
  const msPer = (ticks: number) => (ticks / ticksPerSecond / Math.max(1, result.succeeded)) * 1000;
  const serviceMs = msPer(treeTicks(own) - ownBefore);
  const postgresMs = msPer(treeTicks(treeOf([before.postgresPid!])) - postgresBefore);
  const { rows } = await stats.query<{ n: number }>('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site!.id]);
  return { perSecond: result.succeeded / result.seconds, failed: result.failed + (set.files.length - rows[0]!.n), serviceMs, postgresMs };
}

try {
  await runAlternating<Window>({
    rounds,
    seconds: 0, // a round stores the whole set, however long it takes
    warmSeconds: 0,
    load: (name) => load(name as StoreSystem),
    extra: (w) => (w.failed ? ` FAILED ${w.failed}` : ''),
    unit: 'instance',
    baseline: false,
  });
} finally {
  await stats.end().catch(() => {});
  await after.stop();
  await before.stop();
}
process.exit(0);
