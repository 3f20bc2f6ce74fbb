import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli, runCliJson } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

// The round trip under load, with DICOM, MLLP and FHIR traffic, is the fault campaign's
// "backup" scenario (faults/scenarios/backup-under-load.ts, run by test/e2e/backup-under-load.test.ts);
// here: the embedded database, and every kind of bad input.
const work = mkdtempSync(join(tmpdir(), 'cg-backup-test-'));
let source: TestDatabase;
let sourceEnv: NodeJS.ProcessEnv;
let backupDir: string;
const unique = () => Math.random().toString(36).slice(2, 8).toUpperCase();

before(async () => {
  source = await createTestDatabase();
  sourceEnv = { CG_DATABASE_URL: source.connectionString, CG_DATA_DIR: join(work, 'source-data') };
  await runCliJson(['site', 'create', '--name', `Backup ${unique()}`, '--ae-title', `BK${unique()}`], sourceEnv);
  backupDir = join(work, 'backup');
  await runCliJson(['backup', '--to', backupDir], sourceEnv);
});
after(async () => {
  await source.drop();
  rmSync(work, { recursive: true, force: true });
});

async function freshTarget(name: string): Promise<{ env: NodeJS.ProcessEnv; db: TestDatabase }> {
  const db = await createTestDatabase({ migrate: false });
  return { db, env: { CG_DATABASE_URL: db.connectionString, CG_DATA_DIR: join(work, `${name}-data`) } };
}

test('a backup restores into an empty external database, with its counts, and the schema is current', async () => {
  const target = await freshTarget('fresh');
  try {
    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as { counts: Record<string, number>; schema: { newestMigration: number } };
    const restored = await runCliJson<{ counts: Record<string, number>; migrations_applied: string[] }>(['restore', '--from', backupDir], target.env);
    assert.deepEqual(restored.counts, manifest.counts);
    assert.deepEqual(restored.migrations_applied, []);
    const sites = await runCliJson<unknown[]>(['site', 'list'], target.env);
    assert.equal(sites.length, manifest.counts.site);
  } finally {
    await target.db.drop();
  }
});

test('restore refuses a folder that is not a backup, or does not exist', async () => {
  const notBackup = join(work, 'not-a-backup');
  mkdirSync(notBackup);
  writeFileSync(join(notBackup, 'notes.txt'), 'hello');
  const target = await freshTarget('not-backup');
  try {
    const result = await runCli(['restore', '--from', notBackup, '--json'], target.env);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /is not a Clinical Gateway backup: it has no manifest\.json/);
    const missing = await runCli(['restore', '--from', join(work, 'nowhere')], target.env);
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /does not exist/);
  } finally {
    await target.db.drop();
  }
});

test('restore refuses a truncated backup (no manifest) and a damaged one (checksum), writing nothing', async () => {
  const truncated = join(work, 'truncated');
  cpSync(backupDir, truncated, { recursive: true });
  renameSync(join(truncated, 'manifest.json'), join(truncated, 'manifest.json.partial'));
  const damaged = join(work, 'damaged');
  cpSync(backupDir, damaged, { recursive: true });
  const dump = readFileSync(join(damaged, 'database.dump'));
  dump[dump.length - 10]! ^= 0xff;
  writeFileSync(join(damaged, 'database.dump'), dump);
  const target = await freshTarget('truncated');
  try {
    const cut = await runCli(['restore', '--from', truncated], target.env);
    assert.equal(cut.status, 1);
    assert.match(cut.stderr, /is an incomplete backup: manifest\.json is missing/);
    const broken = await runCli(['restore', '--from', damaged], target.env);
    assert.equal(broken.status, 1);
    assert.match(broken.stderr, /the backup is damaged: database\.dump does not match its checksum/);
    const { rows } = await target.db.database.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    assert.equal(rows[0].n, 0, 'nothing was restored');
  } finally {
    await target.db.drop();
  }
});

test('restore refuses a non-empty database and a non-empty DICOM storage folder', async () => {
  const intoSource = await runCli(['restore', '--from', backupDir], { ...sourceEnv, CG_DATA_DIR: join(work, 'other-data') });
  assert.equal(intoSource.status, 1);
  assert.match(intoSource.stderr, /the target database is not empty \(it has public\./);
  const target = await freshTarget('busy-storage');
  const storage = join(work, 'busy-storage');
  mkdirSync(join(storage, 'some-site'), { recursive: true });
  writeFileSync(join(storage, 'some-site', 'x.dcm'), 'x');
  try {
    const result = await runCli(['restore', '--from', backupDir], { ...target.env, CG_DICOM_STORAGE_DIR: storage });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /the DICOM storage folder .* is not empty \(1 files\)/);
  } finally {
    await target.db.drop();
  }
});

test('backup refuses a folder that is not empty; both commands need their folder', async () => {
  const result = await runCli(['backup', '--to', backupDir], sourceEnv);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /is not empty: a backup goes into a new or empty folder/);
  assert.equal((await runCli(['backup', '--json'], sourceEnv)).status, 2);
  assert.equal((await runCli(['restore'], sourceEnv)).status, 2);
});

test('with the embedded database: back up one data folder and restore it into another', async () => {
  const from = join(work, 'embedded-a');
  const to = join(work, 'embedded-b');
  const name = `Embedded ${unique()}`;
  await runCliJson(['site', 'create', '--name', name, '--ae-title', `EM${unique()}`], { CG_DATA_DIR: from });
  const embeddedBackup = join(work, 'embedded-backup');
  await runCliJson(['backup', '--to', embeddedBackup], { CG_DATA_DIR: from });
  const restored = await runCliJson<{ counts: { site: number } }>(['restore', '--from', embeddedBackup], { CG_DATA_DIR: to });
  assert.equal(restored.counts.site, 1);
  const sites = await runCliJson<{ name: string }[]>(['site', 'list'], { CG_DATA_DIR: to });
  assert.deepEqual(sites.map((site) => site.name), [name]);
});
