import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { summarize } from './stats.ts';

/**
 * The rounds of an A/B comparison on a shared machine: each round loads "before", "after" and the
 * baseline (when there is one) in turn (before and after swapped every other round, the baseline
 * last), prints the round with the load average, then the medians and in how many rounds "after"
 * used less CPU and served more.
 */
export type SystemName = 'before' | 'after' | 'baseline';

export interface AlternatingWindow {
  perSecond: number;
  serviceMs: number;
  postgresMs: number;
}

export interface Alternating<W extends AlternatingWindow> {
  rounds: number;
  seconds: number;
  /** Seconds of each round's untimed warm-up load of every system (0: none). */
  warmSeconds: number;
  load(name: SystemName, seconds: number): Promise<W>;
  /** What a window adds to its line after the CPU figures. */
  extra(window: W): string;
  /** "read", "message": what the CPU figures are per. */
  unit: string;
  /** False: before and after only, no ratios to a baseline. */
  baseline?: boolean;
}

export async function runAlternating<W extends AlternatingWindow>(run: Alternating<W>): Promise<void> {
  const withBaseline = run.baseline !== false;
  const last: SystemName[] = withBaseline ? ['baseline'] : [];
  const names: SystemName[] = ['before', 'after', ...last];
  const seen: Record<SystemName, W[]> = { before: [], after: [], baseline: [] };
  for (const name of names) await run.load(name, 2);
  for (let round = 0; round < run.rounds; round++) {
    const order: SystemName[] = round % 2 === 0 ? ['before', 'after', ...last] : ['after', 'before', ...last];
    for (const name of order) {
      if (run.warmSeconds > 0) await run.load(name, run.warmSeconds);
      seen[name].push(await run.load(name, run.seconds));
    }
    const line = names.map((name) => {
      const w = seen[name][round]!;
      const ratio = withBaseline ? ` ${(w.perSecond / seen.baseline[round]!.perSecond).toFixed(2)}x` : '';
      return `${name} ${w.perSecond.toFixed(0)}/s${ratio} service ${w.serviceMs.toFixed(3)} ms postgres ${w.postgresMs.toFixed(3)} ms${run.extra(w)}`;
    });
    process.stdout.write(`round ${round + 1}, load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}: ${line.join(' | ')}\n`);
  }
  const lower = (pick: (w: W) => number) => seen.after.filter((w, i) => pick(w) < pick(seen.before[i]!)).length;
  for (const name of names) {
    const median = (pick: (w: W) => number) => summarize(seen[name].map(pick)).median;
    process.stdout.write(`median ${name}: ${median((w) => w.perSecond).toFixed(0)}/s, service ${median((w) => w.serviceMs).toFixed(3)} ms, postgres ${median((w) => w.postgresMs).toFixed(3)} ms per ${run.unit}\n`);
  }
  const higher = seen.after.filter((w, i) => w.perSecond > seen.before[i]!.perSecond).length;
  process.stdout.write(`after below before: service CPU in ${lower((w) => w.serviceMs)} of ${run.rounds} rounds, PostgreSQL CPU in ${lower((w) => w.postgresMs)}; throughput higher in ${higher}\n`);
}

/**
 * `node SCRIPT BEFORE_ROOT [ROUNDS] [SECONDS] [CONNECTIONS] [MORE...]`: BEFORE_ROOT is a checkout
 * of the other version (`git archive COMMIT | tar -x -C DIR`, with node_modules linked).
 */
export function alternatingArguments(script: string, defaultConnections: number, more = ''): { beforeRoot: string; rounds: number; seconds: number; connections: number; more: string[] } {
  const [beforeRoot, roundsArg, secondsArg, connectionsArg, ...rest] = process.argv.slice(2);
  if (!beforeRoot) {
    process.stderr.write(`usage: node ${script} BEFORE_ROOT [ROUNDS] [SECONDS] [CONNECTIONS]${more ? ` ${more}` : ''}\n`);
    process.exit(2);
  }
  return { beforeRoot, rounds: Number(roundsArg ?? 6), seconds: Number(secondsArg ?? 5), connections: Number(connectionsArg ?? defaultConnections), more: rest };
}

export const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
