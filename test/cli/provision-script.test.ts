import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { authenticateApiKey } from '../../src/domain/keys/api-keys.ts';
import { cliPath } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

const script = fileURLToPath(new URL('../../docs/examples/provision-site.sh', import.meta.url));
let db: TestDatabase;
let binDirectory: string;
before(async () => {
  db = await createTestDatabase();
  // clinical-gateway on PATH, as an installed CLI would be.
  binDirectory = await mkdtemp(join(tmpdir(), 'cg-cli-'));
  await writeFile(join(binDirectory, 'clinical-gateway'), `#!/bin/sh\nexec '${process.execPath}' '${cliPath}' "$@"\n`);
  await chmod(join(binDirectory, 'clinical-gateway'), 0o755);
});
after(async () => {
  await rm(binDirectory, { recursive: true, force: true });
  await db.drop();
});

function runScript(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], {
      env: { PATH: `${binDirectory}:${process.env.PATH}`, HOME: process.env.HOME, CG_DATABASE_URL: db.connectionString },
    });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

interface Provisioned {
  site: { id: string; name: string; ae_title: string };
  client: { id: string; allowed_ips: string[]; enabled: boolean };
  key: { id: string; key: string };
}

test('the documented provisioning script sets up a site, its AE title, a client and a key with only the CLI and --json, and can run again', async () => {
  const first = await runScript(['Riverside Imaging', 'RIVERSIDE', '10.20.0.15']);
  assert.equal(first.status, 0, first.stderr);
  const made = JSON.parse(first.stdout) as Provisioned;
  assert.deepEqual([made.site.name, made.site.ae_title, made.client.allowed_ips, made.client.enabled], ['Riverside Imaging', 'RIVERSIDE', ['10.20.0.15'], true]);
  const auth = await authenticateApiKey(db.database, made.key.key);
  assert.equal(auth.ok && auth.site.id, made.site.id);

  // Again, with the modality's new AE title and the laboratory's new address: same site and client.
  const second = await runScript(['Riverside Imaging', 'RIVERSIDE2', '10.20.0.16']);
  assert.equal(second.status, 0, second.stderr);
  const again = JSON.parse(second.stdout) as Provisioned;
  assert.deepEqual([again.site.id, again.site.ae_title, again.client.id, again.client.allowed_ips], [made.site.id, 'RIVERSIDE2', made.client.id, ['10.20.0.16']]);
  assert.notEqual(again.key.id, made.key.id);
  const { rows } = await db.database.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_event WHERE actor = 'operator' AND action = 'site.updated' AND target_id = $1", [made.site.id]);
  assert.equal(rows[0]!.n, 1);

  const refused = await runScript(['Other Site', 'RIVERSIDE2', '10.20.0.17']);
  assert.notEqual(refused.status, 0, 'a second site cannot take the same AE title');
  assert.match(refused.stderr, /AE title/);
});
