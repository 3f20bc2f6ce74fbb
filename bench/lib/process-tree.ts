import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/**
 * Process trees from /proc (proc(5)): a service's supervisor and its workers, PostgreSQL's
 * postmaster and its backends. CPU of a tree is read as utime + stime + cutime + cstime of every
 * live member: a child that exited and was reaped has its time in its parent's cutime/cstime, so
 * a backend or worker that ends during a scenario still counts.
 */
interface StatFields {
  ppid: number;
  comm: string;
  ticks: number;
}

function readStat(pid: number): StatFields | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    // Fields after the command: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17).
    const fields = stat.slice(close + 2).split(' ');
    return { ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined;
  }
}

/** Every descendant of `roots`, roots included (one pass over /proc). */
export function treeOf(roots: number[], exclude: ReadonlySet<number> = new Set()): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readStat(pid);
    if (!stat) continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const stack = roots.filter((pid) => !exclude.has(pid));
  while (stack.length > 0) {
    const pid = stack.pop()!;
    found.push(pid);
    for (const child of children.get(pid) ?? []) if (!exclude.has(child)) stack.push(child);
  }
  return found;
}

/** A service's own processes: its tree without PostgreSQL's (an embedded one is the service's child). */
export function serviceProcesses(pid: number): number[] {
  return treeOf([pid]).filter((member) => !readStat(member)?.comm.startsWith('postgres'));
}

export function treeTicks(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + (readStat(pid)?.ticks ?? 0), 0);
}

/**
 * The postmaster of the server `databaseUrl` reaches, when it runs on this machine: the parent
 * of this connection's backend. Undefined when it cannot be seen (another machine, a container).
 */
export async function postmasterPid(databaseUrl: string): Promise<number | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const backend = readStat(rows[0]!.pid);
    return backend && readStat(backend.ppid)?.comm.startsWith('postgres') ? backend.ppid : undefined;
  } finally {
    await client.end();
  }
}
