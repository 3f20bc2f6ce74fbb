import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { serviceNodeOptions } from '../../src/cli/service-runtime.ts';

const root = new URL('../../', import.meta.url);

test('every way of starting the service passes the same Node options', () => {
  const shebang = readFileSync(new URL('bin/clinical-gateway.js', root), 'utf8').split('\n')[0];
  assert.equal(shebang, `#!/usr/bin/env -S node ${serviceNodeOptions.join(' ')}`);
  const scripts = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts as Record<string, string>;
  // exec: the shell npm runs the script in gives way to Node, so a SIGTERM sent to npm reaches the service.
  assert.equal(scripts.start, `exec node ${serviceNodeOptions.join(' ')} bin/clinical-gateway.js serve`);
});
