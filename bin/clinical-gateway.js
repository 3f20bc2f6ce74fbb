#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=4194304 node --max-semi-space-size=8 --heap-growing-percent=50
// The CLI is TypeScript run through Node's type stripping, which needs Node 24;
// npx and npm scripts put the pinned Node 24 (devDependency "node") first on PATH.
import module from 'node:module';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `clinical-gateway needs Node.js 24 or newer (this is ${process.version}); run it through npx or npm so the pinned Node 24 is used\n`,
  );
  process.exit(1);
}
// Node's compile cache keeps each module's stripped and compiled code, keyed by its content:
// once warm, a process never loads the TypeScript stripper (about 17 MB resident in each of a
// node's processes) and starts faster. It lives beside the code, as trusted as the code itself;
// where that folder is not writable the cache is simply off.
module.enableCompileCache?.(new URL('../node_modules/.cache/clinical-gateway-compile', import.meta.url).pathname);
await import('../src/cli/main.ts');
// Written now rather than at exit: a service stopped by SIGKILL would otherwise never write it,
// and the workers a supervisor starts later read it.
module.flushCompileCache?.();
