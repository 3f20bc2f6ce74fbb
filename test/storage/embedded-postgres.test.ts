import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { embeddedSocketDir, openEmbeddedPostgres } from '../../src/storage/embedded-postgres.ts';
import { isTransientDatabaseError } from '../../src/storage/errors.ts';

test('the embedded server is reached through its Unix socket, with its password; a deep data directory keeps to TCP', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-embedded-'));
  const server = await openEmbeddedPostgres({ dataDir });
  try {
    const url = new URL(server.connectionString);
    assert.equal(url.searchParams.get('host'), join(dataDir, 'postgres'));
    const client = new pg.Client({ connectionString: server.connectionString });
    await client.connect();
    try {
      // inet_server_addr() is NULL for a connection over a Unix socket.
      const { rows } = await client.query<{ address: string | null }>('SELECT inet_server_addr()::text AS address');
      assert.equal(rows[0]!.address, null);
    } finally {
      await client.end();
    }
    url.password = 'wrong';
    const intruder = new pg.Client({ connectionString: url.toString() });
    await assert.rejects(intruder.connect(), /password authentication failed/);
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  assert.equal(embeddedSocketDir(join('/tmp', 'd'.repeat(90)), 54321), undefined, 'the socket path would not fit');
  assert.equal(embeddedSocketDir('/tmp/with,comma', 54321), undefined, 'not a plain folder name');
  assert.equal(embeddedSocketDir('/tmp/plain/postgres', 54321), '/tmp/plain/postgres');
});

test('a missing socket is a transient database error; a missing file is not', async () => {
  const client = new pg.Client({ host: '/nonexistent-socket-folder', port: 5432, user: 'x', database: 'x' });
  client.on('error', () => {});
  const refused = await client.connect().then(() => undefined, (error: unknown) => error);
  assert.ok(refused instanceof Error && (refused as NodeJS.ErrnoException).code === 'ENOENT', String(refused));
  assert.equal(isTransientDatabaseError(refused), true);
  const missingFile = await readFile('/nonexistent-file').then(() => undefined, (error: unknown) => error);
  assert.equal(isTransientDatabaseError(missingFile), false);
});
