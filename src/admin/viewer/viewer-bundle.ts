/**
 * The study viewer's libraries (Cornerstone3D) as the browser loads them: one ES module bundle
 * built by esbuild from cornerstone-entry.js, the image loader's decoding worker beside it (the
 * loader starts it as `new URL('./decodeImageFrameWorker.js', import.meta.url)`), and the codecs'
 * WebAssembly files. Built from the installed packages, never committed: `npm ci` builds it
 * (the prepare script), and the admin origin builds it on first use if it is missing or was built
 * from other sources, so a fresh checkout and a changed lockfile both just work.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const entryFile = fileURLToPath(new URL('./cornerstone-entry.js', import.meta.url));
export const viewerBundleDir = join(repositoryRoot, 'build', 'viewer');
const require = createRequire(import.meta.url);

const bundledPackages = ['@cornerstonejs/core', '@cornerstonejs/tools', '@cornerstonejs/dicom-image-loader', 'esbuild'];

/** The decoders' WebAssembly, by the file name the image loader asks for (its wasmBasePath option). */
const wasmFiles: Record<string, string> = {
  'charlswasm_decode.wasm': '@cornerstonejs/codec-charls/dist/charlswasm_decode.wasm',
  'libjpegturbowasm_decode.wasm': '@cornerstonejs/codec-libjpeg-turbo-8bit/dist/libjpegturbowasm_decode.wasm',
  'openjpegwasm_decode.wasm': '@cornerstonejs/codec-openjpeg/dist/openjpegwasm_decode.wasm',
  'openjphjs.wasm': '@cornerstonejs/codec-openjph/dist/openjphjs.wasm',
  'jpegxlwasm_decode.wasm': '@cornerstonejs/codec-libjxl/dist/jpegxlwasm_decode.wasm',
};

function installedVersion(name: string): string {
  const manifest = join(repositoryRoot, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/** What the bundle is built from: a bundle with another key is stale. */
function sourceKey(): string {
  const hash = createHash('sha256').update(readFileSync(entryFile)).update(readFileSync(fileURLToPath(import.meta.url)));
  for (const name of bundledPackages) hash.update(`${name}@${installedVersion(name)}\n`);
  return hash.digest('hex');
}

function isCurrent(key: string): boolean {
  const keyFile = join(viewerBundleDir, 'source-key');
  return existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key;
}

/**
 * The codecs' Emscripten glue (fs, path), seedrandom (crypto) and an XML library of the metadata
 * package (url) require Node modules on paths a browser never takes, some at load: an empty
 * module stands in for each, so that loading succeeds and those paths stay unused.
 */
const nodeBuiltinsAsEmpty: Plugin = {
  name: 'node-builtins-as-empty',
  setup(build) {
    build.onResolve({ filter: /^(node:)?(fs|path|crypto|module|url|worker_threads)$/ }, (args) => ({ path: args.path, namespace: 'node-builtin' }));
    build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

let building: Promise<string> | undefined;

/** The folder holding the current bundle, built first if needed (once per process). */
export function ensureViewerBundle(): Promise<string> {
  building ??= buildIfStale().catch((error: unknown) => {
    building = undefined;
    throw error;
  });
  return building;
}

async function buildIfStale(): Promise<string> {
  const key = sourceKey();
  if (isCurrent(key)) return viewerBundleDir;
  const { build } = await import('esbuild');
  // Built beside the final folder and renamed into place, so that another process never serves
  // half a bundle.
  const staging = `${viewerBundleDir}.${process.pid}.${Date.now()}`;
  mkdirSync(staging, { recursive: true });
  try {
    const workerEntry = require.resolve('@cornerstonejs/dicom-image-loader').replace(/index\.js$/, 'decodeImageFrameWorker.js');
    await build({
      entryPoints: { 'cornerstone-viewer': entryFile, decodeImageFrameWorker: workerEntry },
      outdir: staging,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      legalComments: 'linked',
      logLevel: 'silent',
      plugins: [nodeBuiltinsAsEmpty],
      absWorkingDir: repositoryRoot,
    });
    for (const [name, path] of Object.entries(wasmFiles)) copyFileSync(join(repositoryRoot, 'node_modules', path), join(staging, name));
    writeFileSync(join(staging, 'source-key'), key);
    rmSync(viewerBundleDir, { recursive: true, force: true });
    mkdirSync(dirname(viewerBundleDir), { recursive: true });
    renameSync(staging, viewerBundleDir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (isCurrent(key)) return viewerBundleDir;
    throw error;
  }
  return viewerBundleDir;
}
