// Runs the whole suite. Without CG_TEST_DATABASE_URL it first starts one embedded PostgreSQL for
// the run, so that a fresh machine needs nothing installed; every test file then makes its own
// database on that server.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedPostgres, type EmbeddedPostgres } from '../src/storage/embedded-postgres.ts';

const patterns = process.argv.slice(2);
let embedded: EmbeddedPostgres | undefined;
let dataDir: string | undefined;
const env = { ...process.env };
if (!env.CG_TEST_DATABASE_URL) {
  dataDir = mkdtempSync(join(tmpdir(), 'cg-test-postgres-'));
  embedded = await openEmbeddedPostgres({ dataDir });
  // Over loopback TCP rather than the server's Unix socket, so that the proxies some tests put
  // between the service and the database are in the path (test/storage/embedded-postgres.test.ts
  // covers the socket).
  const url = new URL(embedded.connectionString);
  url.pathname = '/postgres';
  url.searchParams.delete('host');
  env.CG_TEST_SERVER_URL = url.toString();
}
const child = spawn(
  process.execPath,
  ['--test', '--test-concurrency=2', '--test-timeout=300000', ...(patterns.length ? patterns : ['test/**/*.test.ts'])],
  { stdio: 'inherit', env },
);
const code: number = await new Promise((resolve) => child.on('exit', (status, signal) => resolve(status ?? (signal ? 1 : 0))));
await embedded?.stop();
if (dataDir) rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
