import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { missingMallocSettings, serviceMallocEnvironment, serviceNodeOptions } from '../../src/cli/service-runtime.ts';

/** The malloc settings as `NAME=value` words, as the shebang and `npm start` write them. */
const serviceMallocAssignments = Object.entries(serviceMallocEnvironment).map(([name, value]) => `${name}=${value}`).join(' ');

const root = new URL('../../', import.meta.url);

test('every way of starting the service passes the same Node options', () => {
  const shebang = readFileSync(new URL('bin/clinical-gateway.js', root), 'utf8').split('\n')[0];
  assert.equal(shebang, `#!/usr/bin/env -S ${serviceMallocAssignments} node ${serviceNodeOptions.join(' ')}`);
  const scripts = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts as Record<string, string>;
  // exec: the shell npm runs the script in gives way to Node, so a SIGTERM sent to npm reaches the service.
  assert.equal(scripts.start, `${serviceMallocAssignments} exec node ${serviceNodeOptions.join(' ')} bin/clinical-gateway.js serve`);
});

test('a worker gets the malloc settings its supervisor lacks, and keeps those the operator chose', () => {
  assert.deepEqual(missingMallocSettings({}), { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '4194304' });
  assert.deepEqual(missingMallocSettings({ MALLOC_ARENA_MAX: '4' }), { MALLOC_TRIM_THRESHOLD_: '4194304' });
  assert.deepEqual(missingMallocSettings({ MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '0' }), {});
});
