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
 * `node SCRIPT BEFORE_ROOT [NAME...] [MORE...]`: BEFORE_ROOT is a checkout of the other version
 * (`git archive COMMIT | tar -x -C DIR`, with node_modules linked), then numbers in the order
 * given, each with its default; what follows them is returned as it is.
 */
export function beforeRootAndNumbers<const K extends string>(script: string, numbers: readonly (readonly [K, number])[], more = ''): { beforeRoot: string; numbers: Record<K, number>; rest: string[] } {
  const [beforeRoot, ...args] = process.argv.slice(2);
  if (!beforeRoot) {
    const names = numbers.map(([name]) => `[${name.toUpperCase()}]`).join(' ');
    process.stderr.write(`usage: node ${script} BEFORE_ROOT ${names}${more ? ` ${more}` : ''}\n`);
    process.exit(2);
  }
  const values = Object.fromEntries(numbers.map(([name, fallback], i) => [name, Number(args[i] ?? fallback)])) as Record<K, number>;
  return { beforeRoot, numbers: values, rest: args.slice(numbers.length) };
}

/** `node SCRIPT BEFORE_ROOT [ROUNDS] [SECONDS] [CONNECTIONS] [MORE...]`, for the scripts run by runAlternating. */
export function alternatingArguments(script: string, defaultConnections: number, more = ''): { beforeRoot: string; rounds: number; seconds: number; connections: number; more: string[] } {
  const { beforeRoot, numbers, rest } = beforeRootAndNumbers(script, [['rounds', 6], ['seconds', 5], ['connections', defaultConnections]], more);
  return { beforeRoot, ...numbers, more: rest };
}

export { ticksPerSecond } from './process-monitor.ts';
