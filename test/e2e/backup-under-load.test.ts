import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import type { PrivatePostgres } from '../../faults/harness/private-postgres.ts';
import { newReport } from '../../faults/harness/scenario.ts';
import { backupUnderLoad } from '../../faults/scenarios/backup-under-load.ts';
import { testServerUrl } from '../support/database.ts';

/**
 * The fault campaign's backup scenario, at a small scale, on the test server: back up under MLLP,
 * C-STORE and FHIR load, restore on a fresh node, and find everything acknowledged before the
 * backup began (faults/scenarios/backup-under-load.ts has the checks).
 */
test('a backup under mixed load restores on a fresh node with everything acknowledged before it, and the node works with the old credentials', async () => {
  const server = new URL(testServerUrl());
  assert.equal(server.pathname, '/postgres');
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  const databases = async () => new Set((await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'faults\\_backup\\_%' OR datname LIKE 'faults\\_restored\\_%'")).rows.map((row) => row.datname));
  const existing = await databases();
  const workDir = mkdtempSync(join(tmpdir(), 'cg-backup-load-'));
  const report = newReport();
  try {
    const postgres = { url: server.toString() } as PrivatePostgres;
    await backupUnderLoad.run({ workDir, postgres, scale: 0.2, log: () => {} }, report);
  } finally {
    for (const name of await databases()) {
      if (!existing.has(name)) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
    }
    await admin.end();
    rmSync(workDir, { recursive: true, force: true });
  }
  const failed = report.checks.filter((check) => !check.ok);
  assert.deepEqual(failed, [], JSON.stringify(report.tallies));
  assert.ok(report.checks.length >= 20, 'every check ran');
  assert.ok(report.tallies.every((tally) => tally.lost === 0 && tally.duplicated === 0 && tally.found >= tally.acknowledged));
});
