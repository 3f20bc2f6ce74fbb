import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fencedBlocks, readDocument, repositoryRoot, section, type FencedBlock } from './markdown.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { runBash, type ShellResult } from './shell.ts';

// Running the documentation's shell commands as a reader does: with bash, against a service
// started on a fresh embedded database, changing only what the documentation tells the reader to
// change (the ports the service printed, the key and ids the reader was given).

const surfaces = ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb', 'mllp', 'dicom'];

export interface DocumentedService {
  service: ServiceProcess;
  dataDir: string;
  /** The environment of a reader's terminal, pointed at this service's data directory. */
  env: NodeJS.ProcessEnv;
}

/** `clinical-gateway serve` with every surface on a free port and a data directory of its own. */
export async function startDocumentedService(): Promise<DocumentedService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-docs-'));
  const ports = Object.fromEntries(surfaces.map((surface) => [`CG_${surface.toUpperCase()}_PORT`, '0']));
  // The connectivity lookup tells modalities the configured DICOM port, so that one is a real port.
  ports.CG_DICOM_PORT = String(await freePort());
  // The browser-app origin docs/fhir.md's CORS example names.
  const service = await startServiceProcess({ CG_DATA_DIR: dataDir, CG_FHIR_CORS_ORIGINS: 'https://app.example.org', ...ports }, surfaces.length);
  // The machine's PATH, without the checkout's node_modules/.bin that npm puts first when it runs
  // the tests: npx must find the pinned Node on its own, as in a reader's terminal.
  const path = (process.env.PATH ?? '').split(delimiter).filter((entry) => !entry.includes('node_modules')).join(delimiter);
  return { service, dataDir, env: { PATH: path, HOME: process.env.HOME, CG_DATA_DIR: dataDir } };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Where the README says each surface listens by default, read from its `npm start` output. */
function documentedPorts(): Map<string, string> {
  const printed = fencedBlocks(section(readDocument('README.md'), 'Quick start')).find((block) => block.text.includes('Clinical Gateway is running'));
  assert.ok(printed, 'the README shows what npm start prints');
  const ports = new Map<string, string>();
  for (const match of printed.text.matchAll(/^\s+(\w+)\s+\w+:\/\/127\.0\.0\.1:(\d+)$/gm)) ports.set(match[1]!, match[2]!);
  assert.deepEqual([...ports.keys()].sort(), [...surfaces].sort());
  return ports;
}

/**
 * A documented command as the reader runs it: the default ports replaced by the ones the service
 * printed, the default data directory by the service's, and each placeholder assignment
 * (`KEY=cg_…`, `ID=0b7e…`, or the README's example key) given the value the reader was told to
 * put there.
 */
export function asReaderRunsIt(script: string, documented: DocumentedService, values: Record<string, string> = {}): string {
  let result = script;
  for (const [surface, port] of documentedPorts()) {
    const actual = String(documented.service.ports[surface]);
    result = result
      .replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${actual}`)
      .replaceAll(`127.0.0.1 ${port}`, `127.0.0.1 ${actual}`)
      .replaceAll(` -p ${port} `, ` -p ${actual} `);
  }
  result = result.replaceAll(' data/', ` ${documented.dataDir}/`);
  return result.replace(/^(export )?(\w+)=(\S+)$/gm, (line, exported: string | undefined, name: string, value: string) =>
    values[name] !== undefined && (value.includes('…') || value.startsWith('cg_')) ? `${exported ?? ''}${name}=${values[name]}` : line,
  );
}

/** Several JSON documents printed one after the other (curl adds no newline). */
export function jsonDocuments(output: string): unknown[] {
  return output
    .trim()
    .split(/(?<=\})\s*(?=\{)/)
    .map((text): unknown => JSON.parse(text));
}

export interface DocumentedStep {
  name: string;
  /** Finds the step's block among the page's shell blocks: exactly one must match. */
  command: RegExp;
  /** Files the reader has before running the block (their own images, a saved message). */
  prepare?(workDir: string): Promise<void>;
  check(result: ShellResult): void | Promise<void>;
}

/**
 * Runs the steps in the given order, each on the one shell block it names, and fails unless every
 * shell block of the text is a step or is listed in `notRun` (commands that take minutes, run by
 * CI on their own). A block that uses the CLI runs in the checkout (`npx clinical-gateway` is the
 * project's own command there); any other runs in a folder of its own, where it may write files.
 * `values` holds what the reader was given so far (a step's check may add to it): each block
 * gets them as variables and in its placeholder assignments. The variables a block sets stay set
 * for the blocks after it, as in one terminal.
 */
export async function runDocumentedSteps(
  markdown: string,
  documented: DocumentedService,
  steps: DocumentedStep[],
  options: { notRun?: RegExp[]; values?: Record<string, string> } = {},
): Promise<void> {
  const { notRun = [], values = {} } = options;
  const blocks = fencedBlocks(markdown).filter((block) => block.language === 'sh');
  const workDir = mkdtempSync(join(tmpdir(), 'cg-docs-reader-'));
  for (const block of blocks) {
    const covering = [...steps.map((step) => step.command), ...notRun].filter((pattern) => pattern.test(block.text));
    assert.equal(covering.length, 1, `exactly one step (or one reason not to run it) for the block:\n${block.text}`);
  }
  for (const step of steps) {
    const matching: FencedBlock[] = blocks.filter((block) => step.command.test(block.text));
    assert.equal(matching.length, 1, `${step.name}: exactly one block matches ${step.command}`);
    await step.prepare?.(workDir);
    const script = asReaderRunsIt(matching[0]!.text, documented, values);
    const assigned = [...new Set([...script.matchAll(/^(?:export )?([A-Za-z_]\w*)=/gm)].map((match) => match[1]!))];
    const stateFile = join(workDir, '.variables');
    const keepVariables = assigned.length > 0 ? `\nprintf '%s\\0' ${assigned.map((name) => `"${name}=$${name}"`).join(' ')} > '${stateFile}'` : '';
    const result = await runBash(script + keepVariables, { cwd: /\bnpx\b/.test(script) ? repositoryRoot : workDir, env: { ...documented.env, ...values } });
    assert.equal(result.status, 0, `${step.name}: exit ${result.status}\n${script}\n${result.stdout}\n${result.stderr}`);
    if (assigned.length > 0) {
      for (const entry of readFileSync(stateFile, 'utf8').split('\0').filter(Boolean)) {
        const equals = entry.indexOf('=');
        values[entry.slice(0, equals)] = entry.slice(equals + 1);
      }
    }
    await step.check(result);
  }
}
