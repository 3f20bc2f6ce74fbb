#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=50
// The CLI is TypeScript run through Node's type stripping, which needs Node 24;
// npx and npm scripts put the pinned Node 24 (devDependency "node") first on PATH.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `clinical-gateway needs Node.js 24 or newer (this is ${process.version}); run it through npx or npm so the pinned Node 24 is used\n`,
  );
  process.exit(1);
}
await import('../src/cli/main.ts');
