import { spawn } from 'node:child_process';

export interface ShellResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a script with bash as a reader pastes it into a terminal, stopping at the first failing
 * command; killed after `timeoutMs` so that a hanging command fails the test instead of stalling it.
 */
export function runBash(script: string, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: options.cwd, env: options.env, timeout: options.timeoutMs ?? 60_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
