import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { ensureBenchSchema } from './dataset/load-dataset.ts';
import { alternatingArguments, runAlternating, ticksPerSecond, type AlternatingWindow, type SystemName } from './lib/alternating.ts';
import { startChild, tcpAccepts } from './lib/child.ts';
import { startGatewayProcess, type GatewayProcess } from './lib/gateway-process.ts';
import { baselinePorts, benchHost, refreshPorts } from './lib/ports.ts';
import { serviceProcesses, treeOf, treeTicks } from './lib/process-tree.ts';
import { provisionMllpSite } from './lib/provision.ts';
import { adtA01 } from './load/hl7-messages.ts';
import { runMllpLoad } from './load/mllp-client.ts';

/**
 * MLLP ADT^A01 (a new patient each), one version of the service against another, in alternating
 * rounds: each version runs with its own embedded PostgreSQL (a fresh data directory), so the
 * CPU of each PostgreSQL is that version's alone; baseline (b) over MLLP (one single-row INSERT
 * committed per message) runs on the "after" PostgreSQL. Each round loads each in turn (the
 * order reversed every other round), baseline (b) last, and gives messages a second and the CPU
 * per message of the service's own processes and of its PostgreSQL's.
 *
 * `node bench/mllp-alternating.ts BEFORE_ROOT [ROUNDS] [SECONDS] [CONNECTIONS] [WORKERS]`:
 * BEFORE_ROOT is a checkout of the other version (`git archive COMMIT | tar -x -C DIR`, with
 * node_modules linked; or this checkout, with BENCH_BEFORE_ENV and BENCH_AFTER_ENV telling the two
 * apart); "after" is this checkout.
 */
const { beforeRoot, rounds, seconds, connections, more } = alternatingArguments('bench/mllp-alternating.ts', 8, '[WORKERS]');
const workers = Number(more[0] ?? 1);
const root = resolve('.');
const work = join(root, 'bench', 'scratch', 'mllp-alternating');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

/** Extra environment of one version ('NAME=VALUE,...' in BENCH_BEFORE_ENV or BENCH_AFTER_ENV), for comparing settings. */
function extraEnv(name: string): Record<string, string> {
  const text = process.env[`BENCH_${name.toUpperCase()}_ENV`] ?? '';
  return Object.fromEntries(text.split(',').filter(Boolean).map((pair) => pair.split('=') as [string, string]));
}

async function start(name: string, serviceRoot: string): Promise<GatewayProcess> {
  const saved = { ...process.env };
  Object.assign(process.env, extraEnv(name));
  const gateway = await startGatewayProcess({ root: serviceRoot, dataDir: join(work, name), logFile: join(work, `${name}.log`), logLevel: 'info', launcher: 'serve', workers });
  process.env = saved;
  await provisionMllpSite(root, gateway.env, 'bench-mllp', 'BENCHMLLP');
  return gateway;
}

const before = await start('before', resolve(beforeRoot));
const after = await start('after', root);
const client = new pg.Client({ connectionString: after.databaseUrl });
await client.connect();
await ensureBenchSchema(client);
await client.end();
await refreshPorts();
const baseline = await startChild({
  command: process.execPath,
  args: ['bench/baselines/mllp-ack-server.ts'],
  cwd: root,
  env: { ...process.env, BENCH_BASELINE_PORT: String(baselinePorts.mllpInsert), BENCH_DATABASE_URL: after.databaseUrl, BENCH_BASELINE_WORKERS: String(workers) },
  logFile: join(work, 'baseline.log'),
  ready: tcpAccepts(benchHost, baselinePorts.mllpInsert),
});

const systems: Record<SystemName, { port: number; pid: number; postgresPid: number }> = {
  before: { port: before.surfaces.get('mllp')!.port, pid: before.pid, postgresPid: before.postgresPid! },
  after: { port: after.surfaces.get('mllp')!.port, pid: after.pid, postgresPid: after.postgresPid! },
  baseline: { port: baselinePorts.mllpInsert, pid: baseline.pid, postgresPid: after.postgresPid! },
};

interface Window extends AlternatingWindow {
  notAccepted: number;
  /** Messages logged per transaction (by the log rows' transaction ids). */
  perCommit: number;
}

async function perCommit(gateway: GatewayProcess, tag: string): Promise<number> {
  const stats = new pg.Client({ connectionString: gateway.databaseUrl });
  await stats.connect();
  try {
    const { rows } = await stats.query<{ messages: number; commits: number }>(
      "SELECT count(*)::int AS messages, count(DISTINCT xmin::text)::int AS commits FROM inbound_message WHERE control_id LIKE $1",
      [`${tag}A%`],
    );
    return rows[0]!.commits > 0 ? rows[0]!.messages / rows[0]!.commits : 0;
  } finally {
    await stats.end();
  }
}

let batch = 0;
async function load(name: SystemName, durationSeconds: number): Promise<Window> {
  const system = systems[name];
  const own = serviceProcesses(system.pid);
  const ownBefore = treeTicks(own);
  const postgresBefore = treeTicks(treeOf([system.postgresPid]));
  const tag = `R${process.pid}B${batch++}`;
  const result = await runMllpLoad({ host: benchHost, port: system.port, connections, messages: 1_000_000, seconds: durationSeconds, message: (n) => adtA01(tag, n) });
  const accepted = result.ackCodes.AA ?? 0;
  const ms = (ticks: number) => (ticks / ticksPerSecond / Math.max(1, accepted)) * 1000;
  return {
    perSecond: result.messagesPerSecond,
    notAccepted: result.sent - accepted + result.failed,
    serviceMs: ms(treeTicks(own) - ownBefore),
    postgresMs: ms(treeTicks(treeOf([system.postgresPid])) - postgresBefore),
    perCommit: name === 'baseline' ? 1 : await perCommit(name === 'before' ? before : after, tag),
  };
}

try {
  await runAlternating({
    rounds,
    seconds,
    warmSeconds: 0,
    load,
    unit: 'message',
    extra: (w) => ` ${w.perCommit.toFixed(1)}/commit${w.notAccepted ? ` NOT-AA ${w.notAccepted}` : ''}`,
  });
} finally {
  await baseline.stop();
  await after.stop();
  await before.stop();
}
process.exit(0);
