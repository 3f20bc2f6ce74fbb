import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

// A node with workers runs a supervisor that serves nothing: it must not load the surfaces, the
// HTTP framework, the FHIR definitions or the password estimator, each of which costs resident
// memory in every process that holds it (docs/architecture/performance.md, "Memory of a node with workers").
const exec = promisify(execFile);
const root = new URL('../../', import.meta.url);

const loadsEverythingImported = `
import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
await import(new URL('src/cli/commands/index.ts', process.argv[1]).href);
await import(new URL('src/cli/commands/serve.ts', process.argv[1]).href);
await import(new URL('src/server/supervisor.ts', process.argv[1]).href);
process.stdout.write(JSON.stringify(loaded));
`;

test("the supervisor's modules leave out every surface and what only serving processes need", async () => {
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', loadsEverythingImported, root.href], { cwd: root });
  const loaded = JSON.parse(stdout) as string[];
  assert.ok(loaded.some((url) => url.endsWith('/src/server/node-preparation.ts')), 'the probe sees the supervisor load its own modules');
  const unwanted = ['/node_modules/fastify/', '/node_modules/@medplum/', '/node_modules/@zxcvbn-ts/', '/src/fhir/', '/src/hl7v2/', '/src/dicom/listener', '/src/dicomweb/', '/src/admin/', '/src/server/gateway.ts', '/src/server/surfaces.ts'];
  const offending = loaded.filter((url) => unwanted.some((part) => url.includes(part)));
  assert.deepEqual(offending, []);
});
