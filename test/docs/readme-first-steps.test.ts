import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, test } from 'node:test';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import { fencedBlocks, readDocument, repositoryRoot, section } from '../support/markdown.ts';
import { runBash } from '../support/shell.ts';

// The README's first steps, run as a reader runs them: every shell block of the section, in
// order, with bash, in the checkout, against a service started on a fresh embedded database.
// The only changes are the ones the README tells the reader to make: the ports the service
// printed (here drawn at random) and the key the CLI printed.

const readme = readDocument('README.md');
const firstSteps = section(readme, 'First steps');

let service: ServiceProcess;
let dataDir: string;
const surfaces = ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'mllp', 'dicom'];

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'cg-readme-'));
  const ports = Object.fromEntries(surfaces.map((surface) => [`CG_${surface.toUpperCase()}_PORT`, '0']));
  service = await startServiceProcess({ CG_DATA_DIR: dataDir, ...ports }, surfaces.length);
});
after(async () => {
  await service?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Where the README says each surface listens by default, read from its `npm start` output. */
function documentedAddresses(): Map<string, string> {
  const printed = fencedBlocks(section(readme, 'Quick start')).find((block) => block.text.includes('Clinical Gateway is running'));
  assert.ok(printed, 'the quick start shows what npm start prints');
  const addresses = new Map<string, string>();
  for (const match of printed.text.matchAll(/^\s+(\w+)\s+\w+:\/\/127\.0\.0\.1:(\d+)$/gm)) addresses.set(match[1]!, match[2]!);
  assert.deepEqual([...addresses.keys()].sort(), [...surfaces].sort());
  return addresses;
}

/** The ports the reader uses: the README's defaults, replaced by the ones this service printed. */
function withServicePorts(script: string): string {
  let result = script;
  for (const [surface, port] of documentedAddresses()) {
    const actual = String(service.ports[surface]);
    result = result.replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${actual}`).replaceAll(`127.0.0.1 ${port}`, `127.0.0.1 ${actual}`);
  }
  return result;
}

/** Several JSON documents printed one after the other (curl adds no newline). */
function jsonDocuments(output: string): unknown[] {
  return output
    .trim()
    .split(/(?<=\})\s*(?=\{)/)
    .map((text): unknown => JSON.parse(text));
}

interface Bundle {
  resourceType: string;
  type: string;
  total: number;
  entry: { resource: { name: { family: string; given: string[] }[] } }[];
}

/**
 * What each block must print, found by its command. A block without a check, or a check without
 * its block, fails the test: a new first step is checked, and a removed one is noticed.
 */
const checks: { name: string; command: RegExp; check(stdout: string, stderr: string): void }[] = [
  {
    name: 'site, user and key from the CLI',
    command: /clinical-gateway key create/,
    check(stdout) {
      assert.match(stdout, /^ae_title: RIVERSIDE$/m);
      assert.match(stdout, /^email: ris@riverside\.example$/m);
      // The README shows the key command's output: the same lines, with this run's values.
      const shown = fencedBlocks(firstSteps).find((block) => block.language === '' && block.text.includes('key: cg_'));
      assert.ok(shown, 'the README shows what the key command prints');
      for (const line of shown.text.split('\n')) {
        const label = /^(\w+): /.exec(line)?.[1];
        if (label) assert.match(stdout, new RegExp(`^${label}: \\S+$`, 'm'), `the key command prints "${label}:"`);
        else if (line.startsWith('(')) assert.ok(stdout.includes(line), `the key command prints "${line}"`);
      }
      assert.match(stdout, /^key: cg_[0-9a-f]{12}_[\w-]{43}$/m);
    },
  },
  {
    name: 'the key in a variable',
    command: /^export KEY=/m,
    check() {},
  },
  {
    name: 'the capability statement and an empty search',
    command: /fhir\/metadata/,
    check(stdout) {
      const [capability, search] = jsonDocuments(stdout) as [Record<string, unknown>, Bundle];
      assert.equal(capability.resourceType, 'CapabilityStatement');
      assert.equal(capability.fhirVersion, '4.0.1');
      assert.equal(search.resourceType, 'Bundle');
      assert.equal(search.type, 'searchset');
      assert.equal(search.total, 0);
    },
  },
  {
    name: 'an HL7 v2 ADT^A01 over HTTP, acknowledged AA',
    command: /\/v2\/ingest/,
    check(stdout) {
      const [answer] = jsonDocuments(stdout) as [{ ack_code: string; ack: string }];
      assert.ok(firstSteps.includes('`"ack_code": "AA"`'), 'the README names the acknowledgement code');
      assert.equal(answer.ack_code, 'AA');
      assert.match(answer.ack, /\rMSA\|AA\|MSG0001\|/);
    },
  },
  {
    name: 'the patient of the message, found through FHIR',
    command: /Patient\?name=doe/,
    check(stdout) {
      const [bundle] = jsonDocuments(stdout) as [Bundle];
      assert.equal(bundle.total, 1);
      assert.equal(bundle.entry[0]!.resource.name[0]!.family, 'Doe');
      assert.deepEqual(bundle.entry[0]!.resource.name[0]!.given, ['Jane']);
    },
  },
  {
    name: 'a DICOM C-ECHO to the site AE title',
    command: /^echoscu /m,
    check(_stdout, stderr) {
      // DCMTK logs to stderr, which the reader's terminal shows too.
      const promised = /It prints `([^`]+)`/.exec(firstSteps)?.[1];
      assert.ok(promised, 'the README says what echoscu prints');
      assert.ok(stderr.includes(promised), `echoscu printed:\n${stderr}`);
    },
  },
];

test("the README's first steps run as written against a started service", async () => {
  const blocks = fencedBlocks(firstSteps).filter((block) => block.language === 'sh');
  assert.ok(blocks.length > 0, 'the first steps show shell commands');
  // A reader's terminal: the machine's PATH, without the checkout's node_modules/.bin that npm
  // puts first when it runs the tests (npx must find the pinned Node on its own).
  const path = (process.env.PATH ?? '').split(delimiter).filter((entry) => !entry.includes('node_modules')).join(delimiter);
  const env: NodeJS.ProcessEnv = { PATH: path, HOME: process.env.HOME, CG_DATA_DIR: dataDir };
  const exampleKey = /^export KEY=(\S+)$/m.exec(firstSteps)?.[1];
  assert.ok(exampleKey, 'the README puts the key in KEY');
  const used = new Set<string>();
  for (const block of blocks) {
    const matching = checks.filter((candidate) => candidate.command.test(block.text));
    assert.equal(matching.length, 1, `exactly one check for the block:\n${block.text}`);
    const { name, check } = matching[0]!;
    used.add(name);
    // "Put your key (the key: line, not this example) in a variable".
    const script = withServicePorts(env.KEY ? block.text.replaceAll(exampleKey, env.KEY) : block.text);
    const result = await runBash(script, { cwd: repositoryRoot, env });
    assert.equal(result.status, 0, `${name}: exit ${result.status}\n${script}\n${result.stdout}\n${result.stderr}`);
    check(result.stdout, result.stderr);
    if (!env.KEY) {
      const key = /^key: (\S+)$/m.exec(result.stdout)?.[1];
      if (key) env.KEY = key;
    }
  }
  assert.deepEqual([...used].sort(), checks.map((candidate) => candidate.name).sort(), 'every check found its block in the README');
});

test('the quick start is two commands, and both are npm scripts of the project', async () => {
  const [commands] = fencedBlocks(section(readme, 'Quick start')).filter((block) => block.language === 'sh');
  assert.ok(commands);
  const lines = commands.text.split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter(Boolean);
  assert.deepEqual(lines, ['npm ci && npm start', 'npm test']);
  const { scripts } = JSON.parse(readDocument('package.json')) as { scripts: Record<string, string> };
  assert.ok(scripts.start?.includes(' serve'), 'npm start serves');
  assert.ok(scripts.test?.includes('tsc --noEmit') && scripts.test.includes('test/run.ts'), 'npm test type-checks and runs the suite');
});

test('the README is short enough to read in five minutes', () => {
  assert.ok(readme.split('\n').length <= 200, `README.md has ${readme.split('\n').length} lines`);
});
