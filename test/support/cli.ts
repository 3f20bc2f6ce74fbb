import { spawn } from 'node:child_process';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const cliPath = fileURLToPath(new URL('../../bin/clinical-gateway.js', import.meta.url));

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the operator CLI as an operator would, with the pinned Node the tests run on. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs the CLI with --json and parses its output, failing loudly with stderr when it fails. */
export async function runCliJson<T = Record<string, unknown>>(args: string[], env: NodeJS.ProcessEnv): Promise<T> {
  const result = await runCli([...args, '--json'], env);
  if (result.status !== 0) throw new Error(`clinical-gateway ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A migrated database of its own for a CLI test file, and the CLI's environment pointing at it. */
export function useCliDatabase(): { env(): NodeJS.ProcessEnv; database(): TestDatabase['database'] } {
  let db: TestDatabase | undefined;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db?.drop());
  return { env: () => ({ CG_DATABASE_URL: db!.connectionString }), database: () => db!.database };
}
