// Issue 20: a broken test file fails fast. A file whose failed before() leaves a server open, one
// whose top-level await never ends, one missing a fixture and one whose process dies each end the
// run within bounds, each named with why, and a long one is named while it runs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';

const runner = join(import.meta.dirname, '..', 'run.ts');
const fixtures = pathToFileURL(join(import.meta.dirname, '..', 'support', 'fixtures.ts')).href;
const dir = mkdtempSync(join(tmpdir(), 'cg-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const files: Record<string, string> = {
  'server-left-open.test.ts': `import { createServer } from 'node:net';
import { before, test } from 'node:test';
before(async () => {
  await new Promise<void>((resolve) => createServer().listen(0, '127.0.0.1', resolve));
  throw new Error('before() failed with a server still listening');
});
test('never runs', () => {});`,
  'never-ends.test.ts': `import { createServer } from 'node:net';
import { test } from 'node:test';
createServer().listen(0, '127.0.0.1');
await new Promise(() => {});
test('never registered', () => {});`,
  'missing-fixture.test.ts': `import { test } from 'node:test';
import { readFixture } from '${fixtures}';
const bytes = readFixture('dicom/not-there.dcm');
test('reads it', () => void bytes);`,
  'dies.test.ts': `import { test } from 'node:test';
test('its process is killed', () => void process.kill(process.pid, 'SIGKILL'));`,
  'passes.test.ts': `import { test } from 'node:test';
test('passes', () => {});`,
};
for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);

test('every broken file ends within its limit, named with why; the run fails and says which', async () => {
  const limitSeconds = 65;
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      [runner, join(dir, '*.test.ts')],
      // No database is needed: the runner must not start one for these files.
      { env: { ...process.env, CG_TEST_DATABASE_URL: 'postgres://127.0.0.1:1/unused', CG_TEST_FILE_TIMEOUT_S: String(limitSeconds) }, timeout: 150_000 },
      (error, stdout) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout }),
    );
  });
  assert.equal(code, 1, stdout);
  const verdict = (name: string) => stdout.split('\n').find((line) => line.startsWith(`✖ `) && line.includes(`${name}: `));
  assert.match(verdict('server-left-open.test.ts') ?? '', /1 failed/, stdout);
  assert.match(verdict('never-ends.test.ts') ?? '', new RegExp(`killed after ${limitSeconds} s, its time limit`), stdout);
  assert.match(verdict('missing-fixture.test.ts') ?? '', /1 failed/, stdout);
  assert.match(stdout, /fixture missing: test\/fixtures\/dicom\/not-there\.dcm/);
  assert.match(verdict('dies.test.ts') ?? '', /died of SIGKILL/, stdout);
  assert.equal(verdict('passes.test.ts'), undefined, stdout);
  assert.match(stdout, /… still running: .*never-ends\.test\.ts \(1 min\)/);
  assert.match(stdout, /files 5 of 5, failed 4/);
});
