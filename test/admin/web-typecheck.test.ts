import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');

// The web app ships as written (no build step); its JSDoc types are checked here with the DOM
// library, which the server-side project does not include.
test('the web app type-checks against the DOM library', async () => {
  const result = await run(join(root, 'node_modules/.bin/tsc'), ['-p', join(root, 'web/tsconfig.json')], { cwd: root }).catch((error: { stdout: string; code: number }) => error);
  assert.equal('code' in result ? result.code : 0, 0, 'stdout' in result ? result.stdout : '');
});
