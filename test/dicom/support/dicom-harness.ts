import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { loadConfig } from '../../../src/config/env.ts';
import { startDicomListener, type DicomListener, type DicomListenerOptions } from '../../../src/dicom/listener.ts';
import type { Services } from '../../../src/platform/services.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { fixturePath } from '../../support/fixtures.ts';

export const fixturesDir = fixturePath('dicom');
/** A DICOM sample of test/fixtures/dicom, by file name. */
export const dicomFixture = (name: string): string => fixturePath(`dicom/${name}`);
const run = promisify(execFile);

export interface DicomHarness {
  db: TestDatabase;
  dataDir: string;
  services: Services;
  listener: DicomListener;
  restart(options?: Partial<DicomListenerOptions>): Promise<void>;
  stop(): Promise<void>;
}

/** A migrated database of its own, a fresh data directory and a running listener on a free port. */
export async function startHarness(options: Partial<DicomListenerOptions> = {}): Promise<DicomHarness> {
  const db = await createTestDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'cg-dicom-test-'));
  const services: Services = {
    database: db.database,
    config: loadConfig({ CG_DATA_DIR: dataDir }),
    logger: pino({ level: process.env.CG_TEST_LOG_LEVEL ?? 'silent' }),
  };
  const harness: DicomHarness = {
    db,
    dataDir,
    services,
    listener: await startDicomListener(services, { host: '127.0.0.1', port: 0, ...options }),
    async restart(next = {}) {
      await harness.listener.close();
      harness.listener = await startDicomListener(services, { host: '127.0.0.1', port: 0, ...options, ...next });
    },
    async stop() {
      await harness.listener.close();
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a dcmtk tool with TCP_NODELAY=1 (Debian's dcmtk leaves Nagle on otherwise). */
export function dcmtk(tool: string, args: string[]): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn(tool, args, { env: { ...process.env, TCP_NODELAY: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function storescu(port: number, calledAe: string, files: string[], extra: string[] = []): Promise<ToolResult> {
  return dcmtk('storescu', ['-aet', 'MODALITY1', '-aec', calledAe, ...extra, '127.0.0.1', String(port), ...files]);
}

/** Every file under a directory, recursively. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(path)));
    else out.push(path);
  }
  return out;
}

/**
 * The transfers' temporary files under a data directory: those with content. The listener keeps a
 * few empty files ready for each site that is storing (spares); they hold no transfer.
 */
export async function transferFiles(dataDir: string): Promise<string[]> {
  const files = await listFiles(join(dataDir, 'dicom', 'tmp'));
  const sizes = await Promise.all(files.map((file) => stat(file).then((info) => info.size, () => 0)));
  return files.filter((_, i) => sizes[i]! > 0);
}

/** The dataset bytes of a Part-10 file: everything after the file meta group (PS3.10 7.1). */
export function datasetOf(file: Buffer): Buffer {
  if (file.toString('latin1', 128, 132) !== 'DICM') throw new Error('not a Part-10 file');
  // (0002,0000) UL group length is the first element: tag(4) VR(2) length(2) value(4).
  const groupLength = file.readUInt32LE(128 + 4 + 8);
  return file.subarray(128 + 4 + 12 + groupLength);
}

/** The file meta Transfer Syntax UID of a Part-10 file, via dcmtk's dcmdump. */
export async function metaTransferSyntax(path: string): Promise<string> {
  const { stdout } = await run('dcmdump', ['-Un', '+P', '0002,0010', path]);
  return /\[([0-9.]+)\]/.exec(stdout)?.[1] ?? '';
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The dataset's elements and values as dcmtk reads them, without what is only encoding: file meta,
 * group lengths, trailing padding, item/sequence delimiters and defined-vs-undefined lengths.
 * dcmtk re-encodes those when it sends a file, so this is how a sent file is compared with its
 * stored copy at the level of content.
 */
export async function dumpElements(path: string): Promise<string[]> {
  const { stdout } = await dcmtk('dcmdump', ['-q', '+L', path]);
  const lines: string[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^(\s*)\(([0-9a-f]{4}),([0-9a-f]{4})\) (\S\S) (.*?)\s+#/.exec(line);
    if (!match) continue;
    const [, indent, group, element, vr, value] = match;
    if (group === '0002' || group === 'fffe' || group === 'fffc' || element === '0000') continue;
    lines.push(`${indent}(${group},${element}) ${vr} ${vr === 'SQ' ? 'sequence' : value}`);
  }
  return lines;
}

/** A free loopback port, for a peer that cannot listen on port 0 and say which it got (storescp, Orthanc). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
