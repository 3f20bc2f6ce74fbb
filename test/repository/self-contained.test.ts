// Issue 20: the repository stands on its own. Nothing the service, the tests, the benchmark or the
// fault campaign run reads a path outside the checkout, so that any fresh clone, anywhere, passes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { codeFiles, outsidePathsIn } from './outside-paths.ts';

const root = join(import.meta.dirname, '..', '..');

test('no code in src, test, bench, faults, .ci or bin reads a path outside the repository', () => {
  const files = codeFiles(root);
  assert.ok(files.some((file) => file.endsWith(join('test', 'run.ts'))), 'the scan reaches the test runner');
  assert.ok(files.some((file) => file.endsWith(join('.ci', 'run'))), 'the scan reaches the CI script');
  const found = files.flatMap((file) => outsidePathsIn(root, file));
  assert.deepEqual(
    found.map((f) => `${f.file}:${f.line}: ${f.reason}`),
    [],
    'read these from test/fixtures (test/support/fixtures.ts) or a temporary folder instead',
  );
});

test('the scan catches a folder beside the checkout, a path climbing out, and a development folder', () => {
  // Built from parts, so that this file itself holds none of the paths it looks for.
  const up = ['..', '..', '..'].join('/');
  const beside = `${up}/${'sha' + 'red'}/fixtures/dicom/CT_small.dcm`;
  const planted = [
    `const a = new URL('${beside}', import.meta.url);`,
    `const b = join(import.meta.dirname, ${Array(3).fill("'..'").join(', ')}, 'elsewhere', 'x.dcm');`,
    `const c = '${up}/elsewhere/x.hl7';`,
    `const d = '${['', 'wo' + 'rk', 'samples', 'x.hl7'].join('/')}';`,
    `storescu 127.0.0.1 104 ${['', 'ho' + 'me', 'dev', 'x.dcm'].join('/')}`,
    `import { ok } from '../../src/platform/services.ts';`,
    `const e = join(import.meta.dirname, '..', 'fixtures');`,
  ].join('\n');
  const found = outsidePathsIn(root, join(root, 'test', 'hl7v2', 'planted.test.ts'), planted);
  assert.deepEqual(
    [...new Set(found.map((f) => f.line))],
    [1, 2, 3, 4, 5],
    found.map((f) => `${f.line}: ${f.reason}`).join('\n'),
  );
  assert.match(found.find((f) => f.line === 1)!.reason, /beside the repository/);
  assert.match(found.find((f) => f.line === 4)!.reason, /development folder/);
});
