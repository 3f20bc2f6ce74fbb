import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { jsonDocuments, runDocumentedSteps, startDocumentedService, type DocumentedService } from '../support/documented-commands.ts';
import { fencedBlocks, readDocument, section } from '../support/markdown.ts';
import { runBash } from '../support/shell.ts';

// The README's first steps, run as a reader runs them: every shell block of the section, with
// bash, against a service started on a fresh embedded database. The only changes are the ones
// the README tells the reader to make: the ports the service printed (here drawn at random) and
// the key the CLI printed.

const readme = readDocument('README.md');
const firstSteps = section(readme, 'First steps');

let documented: DocumentedService;
before(async () => {
  documented = await startDocumentedService();
});
after(async () => {
  await documented?.service.stop();
  if (documented) rmSync(documented.dataDir, { recursive: true, force: true });
});

interface Bundle {
  resourceType: string;
  type: string;
  total: number;
  entry: { resource: { name: { family: string; given: string[] }[] } }[];
}

test("the README's first steps run as written against a started service", async () => {
  const values: Record<string, string> = {};
  await runDocumentedSteps(
    firstSteps,
    documented,
    [
      {
        name: 'site, user and key from the CLI',
        command: /clinical-gateway key create/,
        check({ stdout }) {
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
          const key = /^key: (cg_[0-9a-f]{12}_[\w-]{43})$/m.exec(stdout)?.[1];
          assert.ok(key, stdout);
          values.KEY = key;
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
        check({ stdout }) {
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
        check({ stdout }) {
          const [answer] = jsonDocuments(stdout) as [{ ack_code: string; ack: string }];
          assert.ok(firstSteps.includes('`"ack_code": "AA"`'), 'the README names the acknowledgement code');
          assert.equal(answer.ack_code, 'AA');
          assert.match(answer.ack, /\rMSA\|AA\|MSG0001\|/);
        },
      },
      {
        name: 'the patient of the message, found through FHIR',
        command: /Patient\?name=doe/,
        check({ stdout }) {
          const [bundle] = jsonDocuments(stdout) as [Bundle];
          assert.equal(bundle.total, 1);
          assert.equal(bundle.entry[0]!.resource.name[0]!.family, 'Doe');
          assert.deepEqual(bundle.entry[0]!.resource.name[0]!.given, ['Jane']);
        },
      },
      {
        name: 'a DICOM C-ECHO to the site AE title',
        command: /^echoscu /m,
        check({ stderr }) {
          // DCMTK logs to stderr, which the reader's terminal shows too.
          const promised = /It prints `([^`]+)`/.exec(firstSteps)?.[1];
          assert.ok(promised, 'the README says what echoscu prints');
          assert.ok(stderr.includes(promised), `echoscu printed:\n${stderr}`);
        },
      },
    ],
    { values },
  );
});

test('"An AE title no site has is rejected"', async () => {
  assert.ok(firstSteps.includes('An AE title no site has is rejected.'));
  const result = await runBash(`echoscu -aec NOSUCHSITE -aet MODALITY 127.0.0.1 ${documented.service.ports.dicom}`, { cwd: documented.dataDir, env: documented.env });
  assert.notEqual(result.status, 0);
  assert.match(result.stderr, /Association Rejected[\s\S]*Called AE Title Not Recognized/);
});

test('every HTTP origin serves the OpenAPI document the README points to', async () => {
  const path = /`(\/api\/documentation\/openapi\.json)`/.exec(readme)?.[1];
  assert.ok(path, 'the README names the OpenAPI document');
  for (const surface of ['fhir', 'hl7', 'mpps', 'connectivity', 'admin', 'dicomweb']) {
    const response = await fetch(`http://127.0.0.1:${documented.service.ports[surface]}${path}`);
    assert.equal(response.status, 200, surface);
    assert.match(((await response.json()) as { openapi: string }).openapi, /^3\./, surface);
  }
});

test('the quick start is two commands, and both are npm scripts of the project', () => {
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
