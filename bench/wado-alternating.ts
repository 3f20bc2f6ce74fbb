import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { orthancAet, startOrthanc } from './baselines/orthanc.ts';
import { beforeRootAndNumbers, ticksPerSecond } from './lib/alternating.ts';
import { startGatewayProcess } from './lib/gateway-process.ts';
import { inNetworkOf } from './lib/netns.ts';
import { baselinePorts, benchHost } from './lib/ports.ts';
import { serviceProcesses, treeOf, treeTicks } from './lib/process-tree.ts';
import { existingSites, provisionSite } from './lib/provision.ts';
import { percentile, summarize } from './lib/stats.ts';
import { smallSet } from './load/dicom-data.ts';
import { runStorescu } from './load/storescu.ts';

/**
 * WADO-RS of the small set (bench/scenarios/dicomweb.ts: every study as multipart/related
 * application/dicom, 4 studies at a time, one curl a study), one version of the service against
 * another and Orthanc's DICOMweb plugin, in alternating rounds: a full bench run cannot resolve a
 * change of a few percent on a shared machine. Both services share one PostgreSQL (the first's
 * embedded one) and one DICOM storage folder, so they send the same files; Orthanc holds copies.
 * Each round retrieves the whole set PASSES times from each system in turn (the order reversed
 * every other round) and gives instances a second (median of the passes, and each round's
 * ratio of the two versions), the CPU per instance of the service's own processes, of
 * PostgreSQL and of Orthanc, and curl's own times to the first byte and the end of a study.
 *
 * `node bench/wado-alternating.ts BEFORE_ROOT [WORKERS] [ROUNDS] [PASSES] [COUNT]`: BEFORE_ROOT is
 * a checkout of the other version (`git archive COMMIT | tar -x -C DIR`, with node_modules and
 * build linked); "after" is this checkout (BEFORE_ROOT "." compares it with itself, to see the
 * noise). Environment: WADO_AB_CONCURRENCY (studies at a time, default 4), WADO_AB_AFTER_ENV
 * (NAME=VALUE,... for "after" only), WADO_AB_PROFILE (a directory: "after" runs with --cpu-prof),
 * WADO_AB_HOLD=1 (set up, write the URL lists and key into bench/scratch/wado-alternating, and
 * wait for SIGINT instead of measuring).
 */
const { beforeRoot, numbers } = beforeRootAndNumbers('bench/wado-alternating.ts', [['workers', 1], ['rounds', 8], ['passes', 3], ['count', 500]]);
const { workers, passes, count } = numbers;
let { rounds } = numbers;
// The bench's 4; 1 gives each request's own time (curl's, without its start-up) with no other in the way.
const concurrency = Number(process.env.WADO_AB_CONCURRENCY ?? 4);
const run = promisify(execFile);
const root = resolve('.');
const work = join(root, 'bench', 'scratch', 'wado-alternating');
rmSync(join(work, 'node-before'), { recursive: true, force: true });
rmSync(join(work, 'node-after'), { recursive: true, force: true });
mkdirSync(join(work, 'node-before', 'dicom'), { recursive: true });
mkdirSync(join(work, 'node-after'), { recursive: true });
// One storage folder for both, so both send the very same files.
symlinkSync(join(work, 'node-before', 'dicom'), join(work, 'node-after', 'dicom'));
const set = await smallSet(join(root, 'bench', 'scratch', 'sets'), count);

const before = await startGatewayProcess({ root: resolve(beforeRoot), dataDir: join(work, 'node-before'), logFile: join(work, 'before.log'), logLevel: 'warn', launcher: 'serve', workers });
const profileDir = process.env.WADO_AB_PROFILE;
// NAME=VALUE pairs (comma-separated) for "after" only, e.g. NODE_CLUSTER_SCHED_POLICY=none.
const afterEnv = (process.env.WADO_AB_AFTER_ENV ?? '').split(',').filter(Boolean).map((pair) => pair.split('=') as [string, string]);
for (const [name, value] of afterEnv) process.env[name] = value;
const after = await startGatewayProcess({
  root, dataDir: join(work, 'node-after'), databaseUrl: before.databaseUrl, logFile: join(work, 'after.log'), logLevel: 'warn', launcher: 'serve', workers,
  ...(profileDir ? { cpuProfileDir: resolve(profileDir) } : {}),
});
for (const [name] of afterEnv) delete process.env[name];
const site = await provisionSite(root, before.env, await existingSites(before.databaseUrl), 'wado-ab', 'WADOAB');
const orthanc = await startOrthanc(work, { dicomweb: true });

async function studyUids(url: string, headers: string[], networkOf?: number): Promise<string[]> {
  const spec = inNetworkOf(networkOf, 'curl', ['-sf', ...headers.flatMap((header) => ['-H', header]), url]);
  const { stdout } = await run(spec.command, spec.args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(stdout) as Record<string, { Value?: string[] }>[]).map((study) => study['0020000D']!.Value![0]!);
}

const storeInto = (port: number, calledAet: string, label: string, networkOf?: number) =>
  runStorescu({ host: benchHost, port, calledAet, callingAet: 'BENCHSCU', files: set.files, associations: 4, logDir: work, label, timeoutSeconds: 600, ...(networkOf !== undefined ? { networkOf } : {}) });
const stored = await storeInto(before.surfaces.get('dicom')!.port, site.aeTitle, 'gateway');
const storedOrthanc = await storeInto(baselinePorts.orthancDicom, orthancAet, 'orthanc', orthanc.pid);
if (stored.failed || storedOrthanc.failed) throw new Error(`store failed: gateway ${stored.failed}, orthanc ${storedOrthanc.failed}`);

type SystemName = 'before' | 'after' | 'orthanc';
const keyHeader = [`X-API-Key: ${site.apiKey}`];
const gatewayUrl = (gateway: typeof before) => `http://${benchHost}:${gateway.surfaces.get('dicomweb')!.port}`;
const orthancUrl = `http://${benchHost}:${baselinePorts.orthancHttp}/dicom-web`;
const systems: Record<SystemName, { urls: string[]; headers: string[]; pid: number; networkOf?: number }> = {
  before: { urls: (await studyUids(`${gatewayUrl(before)}/studies?limit=1000`, keyHeader)).map((uid) => `${gatewayUrl(before)}/studies/${uid}`), headers: keyHeader, pid: before.pid },
  after: { urls: (await studyUids(`${gatewayUrl(after)}/studies?limit=1000`, keyHeader)).map((uid) => `${gatewayUrl(after)}/studies/${uid}`), headers: keyHeader, pid: after.pid },
  orthanc: { urls: (await studyUids(`${orthancUrl}/studies?limit=1000`, [], orthanc.pid)).map((uid) => `${orthancUrl}/studies/${uid}`), headers: [], pid: orthanc.pid, networkOf: orthanc.pid },
};
const expectedBytes = new Map<SystemName, number>();

interface Pass {
  perSecond: number;
  mbPerSecond: number;
  serviceMs: number;
  postgresMs: number;
  serviceTicks: number;
  postgresTicks: number;
  /** Each request's time to its first byte and to its last, in ms (curl's, from connect to end). */
  firstByteMs: number[];
  totalMs: number[];
}

/** One retrieval of every study, `concurrency` at a time, as the bench scenario does it. */
async function pass(name: SystemName): Promise<Pass> {
  const system = systems[name];
  const list = join(work, `${name}.urls`);
  writeFileSync(list, system.urls.join('\n') + '\n');
  const curl = ['curl', '-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_starttransfer} %{time_total}\\n', '-H', 'Accept: multipart/related; type="application/dicom"', ...system.headers.flatMap((header) => ['-H', header])];
  const spec = inNetworkOf(system.networkOf, 'xargs', ['-P', String(concurrency), '-n', '1', '-a', list, ...curl]);
  const own = name === 'orthanc' ? treeOf([system.pid]) : serviceProcesses(system.pid);
  const ownBefore = treeTicks(own);
  const postgresBefore = treeTicks(treeOf([before.postgresPid!]));
  const started = performance.now();
  const { stdout } = await run(spec.command, spec.args, { encoding: 'utf8', timeout: 600_000 });
  const seconds = (performance.now() - started) / 1000;
  const ownTicks = treeTicks(own) - ownBefore;
  const postgresTicks = treeTicks(treeOf([before.postgresPid!])) - postgresBefore;
  let bytes = 0;
  const firstByteMs: number[] = [];
  const totalMs: number[] = [];
  for (const line of stdout.trim().split('\n')) {
    const [status, size, firstByte, total] = line.split(' ');
    if (status !== '200') throw new Error(`${name}: status ${status}`);
    bytes += Number(size);
    firstByteMs.push(Number(firstByte) * 1000);
    totalMs.push(Number(total) * 1000);
  }
  if (name !== 'orthanc') {
    if (expectedBytes.has(name) && expectedBytes.get(name) !== bytes) throw new Error(`${name}: ${bytes} bytes, was ${expectedBytes.get(name)}`);
    expectedBytes.set(name, bytes);
  }
  const msPerInstance = (ticks: number) => (ticks / ticksPerSecond / count) * 1000;
  return { perSecond: count / seconds, mbPerSecond: bytes / 1024 / 1024 / seconds, serviceMs: msPerInstance(ownTicks), postgresMs: name === 'orthanc' ? 0 : msPerInstance(postgresTicks), serviceTicks: ownTicks, postgresTicks: name === 'orthanc' ? 0 : postgresTicks, firstByteMs, totalMs };
}

const seen: Record<SystemName, Pass[]> = { before: [], after: [], orthanc: [] };
const roundMedian: Record<SystemName, number[]> = { before: [], after: [], orthanc: [] };
if (process.env.WADO_AB_HOLD) {
  // Kept running for probing by hand: the URL lists and the API key are written beside the logs.
  for (const name of Object.keys(systems) as SystemName[]) writeFileSync(join(work, `${name}.urls`), systems[name].urls.join('\n') + '\n');
  writeFileSync(join(work, 'hold.json'), JSON.stringify({ apiKey: site.apiKey, orthancPid: orthanc.pid, before: before.pid, after: after.pid, postgres: before.postgresPid }));
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  rounds = 0;
}
try {
  // Warm-up: each system's code paths and caches, as the bench's store phase and first round do.
  if (rounds > 0) for (const name of Object.keys(systems) as SystemName[]) for (let i = 0; i < 3; i++) await pass(name);
  for (let round = 0; round < rounds; round++) {
    const order: SystemName[] = round % 2 === 0 ? ['before', 'after', 'orthanc'] : ['orthanc', 'after', 'before'];
    for (const name of order) {
      const these: Pass[] = [];
      for (let i = 0; i < passes; i++) these.push(await pass(name));
      seen[name].push(...these);
      roundMedian[name].push(summarize(these.map((p) => p.perSecond)).median);
    }
    const line = (Object.keys(systems) as SystemName[]).map((name) => `${name} ${roundMedian[name][round]!.toFixed(0)}/s ${(roundMedian[name][round]! / roundMedian.orthanc[round]!).toFixed(2)}x`);
    process.stdout.write(`round ${round + 1}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}: ${line.join(' | ')}\n`);
  }
  for (const name of Object.keys(systems) as SystemName[]) {
    const median = (pick: (p: Pass) => number) => summarize(seen[name].map(pick)).median;
    // A tick (10 ms) is a fiftieth of a pass's CPU: the sum over every pass resolves what a median of passes cannot.
    const mean = (pick: (p: Pass) => number) => ((seen[name].reduce((sum, p) => sum + pick(p), 0) / ticksPerSecond / (count * seen[name].length)) * 1000).toFixed(3);
    const requestTimes = (pick: (p: Pass) => number[]) => {
      const all = seen[name].flatMap(pick);
      return `${percentile(all, 10).toFixed(1)} ms (10th percentile), ${percentile(all, 50).toFixed(1)} ms (median)`;
    };
    // On a loaded machine the best passes are the nearest to what a quiet one gives.
    const best = percentile(seen[name].map((p) => p.perSecond), 90);
    process.stdout.write(`median ${name} (CG_WORKERS=${workers}): ${median((p) => p.perSecond).toFixed(0)} inst/s (90th percentile ${best.toFixed(0)}), ${median((p) => p.mbPerSecond).toFixed(0)} MB/s, own CPU ${mean((p) => p.serviceTicks)} ms, postgres ${mean((p) => p.postgresTicks)} ms an instance (all passes' ticks over all their instances); a study: first byte ${requestTimes((p) => p.firstByteMs)}, whole ${requestTimes((p) => p.totalMs)}\n`);
  }
  const ratios = roundMedian.after.map((value, i) => value / roundMedian.before[i]!);
  process.stdout.write(`after/before by round: ${ratios.map((r) => r.toFixed(2)).join(' ')} (median ${summarize(ratios).median.toFixed(2)}); after/orthanc median ${summarize(roundMedian.after.map((v, i) => v / roundMedian.orthanc[i]!)).median.toFixed(2)}, before/orthanc ${summarize(roundMedian.before.map((v, i) => v / roundMedian.orthanc[i]!)).median.toFixed(2)}\n`);
} finally {
  await orthanc.stop();
  await after.stop();
  await before.stop();
}
process.exit(0);
