import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { stopChild } from './gateway-process.ts';

/** A baseline server run as a child of the bench, so that its memory and CPU are its own. */
export interface RunningChild {
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface ChildStart {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  logFile: string;
  /** Resolves when the server accepts work (polled until it does or the timeout passes). */
  ready: () => Promise<boolean>;
  timeoutMs?: number;
  /** Told the child's pid before the first readiness check. */
  onSpawn?: (pid: number) => void;
}

export async function startChild(start: ChildStart): Promise<RunningChild> {
  const logFd = openSync(start.logFile, 'w');
  const child = spawn(start.command, start.args, { cwd: start.cwd, env: start.env ?? process.env, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  start.onSpawn?.(child.pid!);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + (start.timeoutMs ?? 30_000);
  while (!(await start.ready().catch(() => false))) {
    if (exited) throw new Error(`${start.command} exited during start-up; see ${start.logFile}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${start.command} did not become ready; see ${start.logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { pid: child.pid!, child, stop: () => stopChild(child, 10_000) };
}

/** Ready check: an HTTP GET that answers at all. */
export function httpAnswers(url: string): () => Promise<boolean> {
  return async () => {
    const response = await fetch(url);
    await response.arrayBuffer();
    return true;
  };
}

/** Ready check: a TCP connect that succeeds. */
export function tcpAccepts(host: string, port: number): () => Promise<boolean> {
  return async () => {
    const { connect } = await import('node:net');
    return new Promise<boolean>((resolve) => {
      const socket = connect({ host, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  };
}
