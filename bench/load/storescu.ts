import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inNetworkOf } from '../lib/netns.ts';

/**
 * C-STORE load with dcmtk's storescu: one storescu process per association, the files dealt
 * round-robin between them. TCP_NODELAY=1: Debian's DCMTK 3.6.7 leaves Nagle's algorithm on
 * otherwise, and every instance then waits ~40 ms for a delayed ACK, on any SCP.
 */
export interface StoreLoad {
  host: string;
  port: number;
  calledAet: string;
  callingAet: string;
  files: string[];
  associations: number;
  logDir: string;
  label: string;
  timeoutSeconds: number;
  /** Run inside the network namespace of this process (a baseline SCP in its own namespace). */
  networkOf?: number;
}

export interface StoreResult {
  seconds: number;
  succeeded: number;
  failed: number;
}

export async function runStorescu(load: StoreLoad): Promise<StoreResult> {
  const lists: string[][] = Array.from({ length: load.associations }, () => []);
  load.files.forEach((file, i) => lists[i % load.associations]!.push(file));
  const started = performance.now();
  const logs = await Promise.all(
    lists.map((files, i) => {
      const log = join(load.logDir, `storescu-${load.label}-${i}.log`);
      return new Promise<string>((resolve) => {
        const command = inNetworkOf(load.networkOf, 'storescu', ['-v', '-aet', load.callingAet, '-aec', load.calledAet, load.host, String(load.port), ...files]);
        const child = spawn(command.command, command.args, {
          env: { ...process.env, TCP_NODELAY: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        const timer = setTimeout(() => child.kill('SIGKILL'), load.timeoutSeconds * 1000);
        child.once('exit', () => {
          clearTimeout(timer);
          writeFileSync(log, output);
          resolve(output);
        });
      });
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const succeeded = logs.reduce((sum, log) => sum + (log.match(/Received Store Response \(Success\)/g)?.length ?? 0), 0);
  return { seconds, succeeded, failed: load.files.length - succeeded };
}
