import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { globSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { writeSyntheticInstance } from '../dicom/support/synthetic-instance.ts';
import { runCliJson } from '../support/cli.ts';
import { jsonDocuments, runDocumentedSteps, startDocumentedService, type DocumentedService } from '../support/documented-commands.ts';
import { testServerUrl } from '../support/database.ts';
import { fencedBlocks, readDocument, repositoryRoot } from '../support/markdown.ts';
import { runBash } from '../support/shell.ts';

// Each page's shell commands, run as a reader runs them against one service started on a fresh
// embedded database (test/support/documented-commands.ts): a page's commands fail this test as
// soon as they stop doing what the page says. Commands that run for minutes (the benchmark, the
// fault campaign) are named and left to CI, which runs them on their own.

const exec = promisify(execFile);
let documented: DocumentedService;
/** The README's first steps, done through the CLI: the site, user and key the pages build on. */
let riversideKey: string;

before(async () => {
  documented = await startDocumentedService();
  const env = { CG_DATA_DIR: documented.dataDir };
  await runCliJson(['site', 'create', '--name', 'Riverside', '--ae-title', 'RIVERSIDE'], env);
  await runCliJson(['user', 'create', '--site', 'Riverside', '--email', 'ris@riverside.example', '--role', 'clinician'], env);
  riversideKey = (await runCliJson<{ key: string }>(['key', 'create', '--site', 'Riverside', '--user', 'ris@riverside.example'], env)).key;
});
after(async () => {
  await documented?.service.stop();
  if (documented) rmSync(documented.dataDir, { recursive: true, force: true });
});

// curl prints no newline after a body, so a status line may follow the previous answer's body.
const statusLines = (output: string) => [...output.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));

test('docs/fhir.md: the examples create, read, update and search as their comments say', async () => {
  const values: Record<string, string> = { KEY: riversideKey };
  await runDocumentedSteps(readDocument('docs/fhir.md'), documented, [
    {
      name: 'capability statement, create, conditional create',
      command: /\$FHIR\/metadata/,
      check({ stdout }) {
        assert.equal((jsonDocuments(stdout.slice(0, stdout.indexOf('HTTP/1.1')))[0] as { resourceType: string }).resourceType, 'CapabilityStatement');
        assert.deepEqual(statusLines(stdout), [201, 200], 'create 201, then the conditional create finds it: 200');
        const id = /^location: \S+\/fhir\/Patient\/([^/\s]+)\/_history\/1\r?$/im.exec(stdout)?.[1];
        assert.ok(id, 'the create answers a Location as the page describes it');
        values.ID = id;
      },
    },
    {
      name: 'read, vread, history, update, searches',
      command: /^ID=/m,
      check({ stdout }) {
        assert.deepEqual(statusLines(stdout), [200], 'the update is 200');
        assert.match(stdout, /^etag: W\/"2"\r?$/im, 'the update makes version 2');
        assert.doesNotMatch(stdout, /"resourceType":"OperationOutcome"/);
        const bundles = stdout.match(/"resourceType":"Bundle"/g) ?? [];
        assert.equal(bundles.length, 6, 'history and five searches answer Bundles');
        assert.match(stdout, /"given":\["Jane","Ann"\]/);
      },
    },
    {
      name: 'conditional update',
      command: /-X PUT "\$FHIR\/Observation\?/,
      check({ stdout }) {
        assert.deepEqual(statusLines(stdout), [201, 200], 'no match creates, then the one match is updated');
        assert.match(stdout, /"versionId":"2"/);
      },
    },
    {
      name: 'a transaction Bundle',
      command: /"type": "transaction"/,
      check({ stdout }) {
        const [answer] = jsonDocuments(stdout) as [{ type: string; entry: { resource?: unknown; response: { status: string; location: string } }[] }];
        assert.equal(answer.type, 'transaction-response');
        assert.deepEqual(answer.entry.map((entry) => entry.response.status), ['201 Created', '201 Created']);
        assert.ok(answer.entry.every((entry) => entry.resource === undefined), 'Prefer: return=minimal');
        assert.match(answer.entry[0]!.response.location, /^Patient\/[^/]+\/_history\/1$/);
      },
    },
    {
      name: 'a batch Bundle',
      command: /"type": "batch"/,
      check({ stdout }) {
        assert.deepEqual(JSON.parse(stdout), ['201 Created', '200 OK', '404 Not Found'], 'each entry answered on its own');
      },
    },
    {
      name: 'includes, summaries and sorting',
      command: /_include=Observation:patient/,
      check({ stdout }) {
        const [included, reverse, summary, elements, sorted] = jsonDocuments(stdout) as {
          resourceType: string;
          total?: number;
          entry?: { resource: { resourceType: string; meta?: { tag?: { code: string }[] }; note?: unknown }; search: { mode: string } }[];
          meta?: { tag?: { code: string }[] };
          name?: unknown;
          gender?: unknown;
        }[];
        const modes = (bundle: typeof included) => bundle!.entry!.map((entry) => `${entry.search.mode} ${entry.resource.resourceType}`);
        assert.deepEqual(modes(included), ['match Observation', 'include Patient'], '_include adds the patient');
        assert.equal(included!.total, 1, 'the total counts matches only');
        assert.deepEqual(modes(reverse), ['match Patient', 'include Observation'], '_revinclude adds the observation');
        assert.ok(summary!.entry!.every((entry) => entry.resource.meta?.tag?.some((tag) => tag.code === 'SUBSETTED')), '_summary=true is SUBSETTED');
        assert.equal(elements!.resourceType, 'Patient');
        assert.ok(elements!.name && elements!.gender === undefined, '_elements keeps name, not gender');
        assert.ok(elements!.meta?.tag?.some((tag) => tag.code === 'SUBSETTED'));
        assert.equal(sorted!.resourceType, 'Bundle');
        assert.match(stdout, /_sort=gender%2C-birthdate%2C_id/);
      },
    },
    {
      name: 'everything about a patient',
      command: /\\\$everything\?_count=200/,
      check({ stdout }) {
        const [all, some] = jsonDocuments(stdout) as { type: string; entry: { resource: { resourceType: string; id: string } }[] }[];
        assert.equal(all!.type, 'searchset');
        assert.deepEqual([all!.entry[0]!.resource.resourceType, all!.entry[0]!.resource.id], ['Patient', values.ID], 'the patient comes first');
        assert.ok(some!.entry.every((entry) => ['Observation', 'Condition'].includes(entry.resource.resourceType)), '_type keeps those types only');
      },
    },
    {
      name: 'type and site history',
      command: /\/Patient\/_history\?_count=10/,
      check({ stdout }) {
        const [patients, site] = jsonDocuments(stdout) as { type: string; entry: { resource: { resourceType: string } }[] }[];
        assert.equal(patients!.type, 'history');
        assert.ok(patients!.entry.length >= 2 && patients!.entry.every((entry) => entry.resource.resourceType === 'Patient'));
        assert.equal(site!.type, 'history');
        assert.ok(site!.entry.some((entry) => entry.resource.resourceType === 'Observation'));
      },
    },
    {
      name: 'conditional read, HEAD, compression, CORS',
      command: /If-None-Match/,
      check({ stdout }) {
        // 304 on the ETag, HEAD's 200 (consumed by sed), 304 on If-Modified-Since, the br headers, the CORS preflight, the app's read.
        assert.deepEqual(statusLines(stdout), [304, 304, 200, 204, 200]);
        assert.match(stdout, /^access-control-expose-headers: .*content-location.*x-progress.*\r?$/im);
        assert.match(stdout, /^content-encoding: br\r?$/im);
        assert.match(stdout, /\{\s*"resourceType": ?"CapabilityStatement"/);
        assert.match(stdout, /^access-control-allow-origin: https:\/\/app\.example\.org\r?$/im);
        assert.doesNotMatch(stdout, /access-control-allow-credentials/i);
      },
    },
    {
      name: 'Bulk Data export: kick-off, poll, download, cancel',
      command: /\\\$export\?_type=/,
      check({ stdout }) {
        const manifest = jsonDocuments(stdout.slice(0, stdout.indexOf('HTTP/1.1')))[0] as { requiresAccessToken: boolean; output: { type: string; count: number }[] };
        assert.equal(manifest.requiresAccessToken, true);
        assert.deepEqual(manifest.output.map((file) => file.type).sort(), ['Observation', 'Patient']);
        const lines = stdout.slice(0, stdout.indexOf('HTTP/1.1')).split('\n').filter((line) => line.startsWith('{"id"'));
        assert.equal(lines.length, manifest.output.reduce((sum, file) => sum + file.count, 0), 'every resource of the manifest is downloaded, one a line');
        assert.deepEqual(statusLines(stdout), [202, 404, 202], 'DELETE is 202, then the status is 404; the Patient/$export kick-off is 202');
      },
    },
  ], { values });
});

test('docs/hl7v2.md: HTTP and MLLP intake, the integration client and the message log', async () => {
  const page = readDocument('docs/hl7v2.md');
  await runDocumentedSteps(page, documented, [
    {
      name: 'a message over HTTP, answered as the page shows',
      command: /\/v2\/ingest/,
      check({ stdout }) {
        const [answer] = jsonDocuments(stdout) as [Record<string, unknown>];
        const shown = JSON.parse(fencedBlocks(page).find((block) => block.language === 'json')!.text) as Record<string, unknown>;
        assert.deepEqual(Object.keys(answer).sort(), Object.keys(shown).sort());
        for (const field of ['success', 'message_type', 'control_id', 'ack_code', 'duplicate', 'errors', 'warnings']) assert.deepEqual(answer[field], shown[field], field);
      },
    },
    {
      name: 'the lab system as an MLLP client',
      command: /client create/,
      check({ stdout }) {
        assert.match(stdout, /^protocol: hl7-mllp$/m);
        assert.match(stdout, /^allowed_ips: 127\.0\.0\.1$/m);
      },
    },
    {
      name: 'a message over MLLP with mllp_send',
      command: /mllp_send/,
      check({ stdout }) {
        const promised = /prints the acknowledgement, `([^`]+)`/.exec(page)?.[1];
        assert.ok(promised, 'the page says what mllp_send prints');
        assert.ok(stdout.includes(promised), stdout);
      },
    },
    {
      name: 'the message log',
      command: /messages list/,
      check({ stdout }) {
        assert.match(stdout, /hl7v2\s+mllp\s+ADT\^A08\s+MSG0002\s+LAB@HOSP\s+AA/);
        assert.match(stdout, /hl7v2\s+http\s+ADT\^A01\s+MSG0001\s+LAB@HOSP\s+AA/);
      },
    },
  ], { values: { KEY: riversideKey } });
});

test('docs/hl7v3.md: the example message, plain and in a SOAP envelope', async () => {
  const page = readDocument('docs/hl7v3.md');
  await runDocumentedSteps(page, documented, [
    {
      name: 'the example message, saved as add.xml and posted',
      command: /@add\.xml/,
      async prepare(workDir) {
        writeFileSync(join(workDir, 'add.xml'), fencedBlocks(page).find((block) => block.language === 'xml')!.text);
      },
      async check({ stdout }) {
        assert.match(stdout, /<typeCode code="AA"\/>/);
        assert.match(stdout, /<id root="21acf7be-007c-41e6-b176-d0969794983b" extension="345"\/>/);
        // "The patient is readable over FHIR on the same site at once: GET /fhir/Patient?identifier=PIX10515W3".
        const read = /readable over FHIR on the same site at\s+once: `GET (\/fhir\/Patient\?identifier=\w+)`/.exec(page)?.[1];
        assert.ok(read, 'the page names the FHIR read');
        const bundle = (await (await fetch(`http://127.0.0.1:${documented.service.ports.fhir}${read}`, { headers: { 'x-api-key': riversideKey } })).json()) as { total: number; entry: { resource: { name: { family: string }[] } }[] };
        assert.equal(bundle.total, 1);
        assert.equal(bundle.entry[0]!.resource.name[0]!.family, 'WASHINGTON');
      },
    },
    {
      name: 'the same message in a SOAP 1.2 envelope',
      command: /iti44-request\.xml/,
      check({ stdout }) {
        assert.match(stdout, /<soap:Envelope /);
        assert.match(stdout, /<wsa:Action soap:mustUnderstand="true">urn:hl7-org:v3:MCCI_IN000002UV01<\/wsa:Action>/);
        assert.match(stdout, /<wsa:RelatesTo>urn:uuid:0f4e2a6c-5d1b-4a8e-9c3f-7b2d1e6a9f40<\/wsa:RelatesTo>/);
        assert.match(stdout, /<typeCode code="AA"\/>/);
      },
    },
  ], { values: { KEY: riversideKey } });
});

let pacs: ChildProcess | undefined;
let pacsDir = '';

test('docs/imaging.md: a modality connected, images stored, a procedure step, a report, query/retrieve', async () => {
  const page = readDocument('docs/imaging.md');
  const study = '1.2.826.0.1.3680043.2.1125.2.1';
  const instance = (path: string, series: number, number: number) => writeSyntheticInstance(path, { study, series: `${study}.${series}`, instance: `${study}.${series}.${number}` }, 16, 16);
  await runDocumentedSteps(page, documented, [
    {
      name: 'the site with its AE title',
      command: /site create --name "Imaging Centre North"/,
      check({ stdout }) {
        assert.match(stdout, /^ae_title: NORTH_CG$/m);
      },
    },
    {
      name: 'a key, and where the DICOM listener is',
      command: /connectivity\/dimse/,
      check({ stdout }) {
        // After the user command's own output.
        assert.deepEqual(JSON.parse(stdout.slice(stdout.lastIndexOf('\n{') + 1)), { host: '127.0.0.1', port: documented.service.ports.dicom });
      },
    },
    {
      name: 'a study sent from the modality',
      command: /127\.0\.0\.1 11112 \*\.dcm/,
      async prepare(workDir) {
        await writeSyntheticInstance(join(workDir, 'first.dcm'), { study: '1.2.826.0.1.3680043.2.1125.9', series: '1.2.826.0.1.3680043.2.1125.9.1', instance: '1.2.826.0.1.3680043.2.1125.9.1.1' }, 16, 16);
      },
      check() {},
    },
    {
      name: 'the study on the worklist',
      command: /studies list/,
      check({ stdout }) {
        const { studies } = JSON.parse(stdout) as { studies: { study_uid: string; instances: number }[] };
        assert.deepEqual(studies.map((entry) => [entry.study_uid, entry.instances]), [['1.2.826.0.1.3680043.2.1125.9', 1]]);
      },
    },
    {
      name: 'a procedure step over HTTP, stored as shown',
      command: /127\.0\.0\.1:8082\/ingest/,
      check({ stdout }) {
        const shown = JSON.parse(fencedBlocks(page).find((block) => block.language === 'json' && block.text.includes('"study_indexed"'))!.text.replaceAll('"…"', 'null')) as Record<string, unknown>;
        const stored = JSON.parse(stdout) as Record<string, unknown>;
        assert.deepEqual(Object.keys(stored).sort(), Object.keys(shown).sort());
        for (const field of ['sop_instance_uid', 'study_uid', 'status', 'modality', 'station_ae_title', 'started_at', 'ended_at', 'procedure_code', 'study_indexed', 'version']) {
          assert.deepEqual(stored[field], shown[field], field);
        }
      },
    },
    {
      name: 'C-ECHO and C-STORE with DCMTK',
      command: /^echoscu /m,
      async prepare(workDir) {
        mkdirSync(join(workDir, 'ct'));
        mkdirSync(join(workDir, 'study'));
        await instance(join(workDir, 'ct', '1.dcm'), 1, 1);
        await instance(join(workDir, 'ct', '2.dcm'), 1, 2);
        await instance(join(workDir, 'uncompressed.dcm'), 1, 3);
        await exec('dcmconv', ['+td', join(workDir, 'uncompressed.dcm'), join(workDir, 'deflated.dcm')]);
        rmSync(join(workDir, 'uncompressed.dcm'));
        await instance(join(workDir, 'study', '1.dcm'), 2, 1);
      },
      async check() {
        const { studies } = await runCliJson<{ studies: { study_uid: string; instances: number; procedure_status: unknown }[] }>(
          ['studies', 'list', '--site', 'Imaging Centre North'],
          { CG_DATA_DIR: documented.dataDir },
        );
        assert.equal(studies.find((entry) => entry.study_uid === study)?.instances, 4, 'ct/1, ct/2, deflated and study/1 are stored');
      },
    },
    {
      name: 'a completed report on the study',
      command: /report create/,
      check({ stdout }) {
        const report = JSON.parse(stdout) as { status: string; study_uid: string; author_user_id: string | null };
        assert.equal(report.status, 'completed');
        assert.equal(report.study_uid, study);
        assert.ok(report.author_user_id, 'the author is recorded');
      },
    },
    {
      name: 'a C-MOVE destination registered',
      command: /dicom-destination create/,
      check({ stdout }) {
        assert.match(stdout, /^ae_title: PACS_1$/m);
        assert.match(stdout, /^port: 11113$/m);
      },
    },
    {
      name: 'C-FIND, C-GET and C-MOVE with DCMTK',
      command: /^findscu /m,
      async prepare(workDir) {
        mkdirSync(join(workDir, 'received'));
        pacs = spawn('storescp', ['-aet', 'PACS_1', '-od', join(workDir, 'received'), '11113'], { stdio: 'ignore' });
        pacsDir = workDir;
        for (let attempt = 0; (await exec('echoscu', ['-aec', 'PACS_1', '127.0.0.1', '11113']).then(() => false, () => true)) && attempt < 100; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      },
      check() {
        pacs?.kill();
        assert.equal(readdirSync(join(pacsDir, 'retrieved')).length, 1, 'C-GET brought the study of one instance');
        assert.equal(readdirSync(join(pacsDir, 'received')).length, 1, 'C-MOVE sent it to PACS_1');
      },
    },
    {
      name: 'DICOMweb: a search, metadata and a retrieval of the stored study, and a STOW-RS store',
      command: /\$DICOMWEB\/studies\?PatientName=/,
      async prepare(workDir) {
        await writeSyntheticInstance(join(workDir, 'new.dcm'), { study: '1.2.826.0.1.3680043.2.1125.10', series: '1.2.826.0.1.3680043.2.1125.10.1', instance: '1.2.826.0.1.3680043.2.1125.10.1.1' }, 16, 16);
      },
      check({ stdout }) {
        // Three JSON answers one after the other: the search, the metadata, the STOW-RS response.
        assert.match(stdout, /"0020000D":\{"vr":"UI","Value":\["1\.2\.826\.0\.1\.3680043\.2\.1125\.9"\]\}/, 'the search finds the study sent from the modality');
        assert.match(stdout, /"00080018":\{"vr":"UI","Value":\["1\.2\.826\.0\.1\.3680043\.2\.1125\.9\.1\.1"\]\}/, 'its metadata names its instance');
        assert.match(stdout, /"00081199":\{"vr":"SQ","Value":\[\{"00081150"/, 'STOW-RS stored the new instance');
        assert.doesNotMatch(stdout, /"00081198":\{"vr":"SQ","Value"/, 'and nothing failed');
      },
    },
    {
      name: 'DICOMweb: thumbnails of the stored study and series, its instance and frame rendered',
      command: /\/thumbnail\?viewport=128,128/,
      check({ stdout }) {
        assert.deepEqual(stdout.trim().split('\n'), ['200 image/jpeg', '200 image/jpeg', '200 image/png', '200 image/jpeg']);
      },
    },
  ]);
});

test('docs/admin-app.md: the initial password and the JSON API with curl', async () => {
  await runDocumentedSteps(readDocument('docs/admin-app.md'), documented, [
    {
      name: 'the initial password',
      command: /^cat data\/initial-admin-password$/m,
      check({ stdout }) {
        assert.ok(stdout.trim().length >= 16, 'a generated password');
      },
    },
    {
      name: 'sign in, a site, a clinician, a key, the worklist, sign out',
      command: /"name":"Northfield Imaging"/,
      check({ stdout }) {
        const [created, worklist] = jsonDocuments(stdout) as [{ key: string; api_key: { label: string } }, { studies: unknown[]; total: number }];
        assert.match(created.key, /^cg_[0-9a-f]{12}_/);
        assert.equal(created.api_key.label, 'EHR');
        assert.deepEqual(worklist, { studies: [], total: 0 });
      },
    },
    {
      name: 'an automation token: a read and a write with Authorization: Bearer, then revoked',
      command: /automation-token create --label ci/,
      check({ stdout }) {
        const lines = stdout.trim().split('\n');
        assert.ok((JSON.parse(lines[0]!) as string[]).includes('Northfield Imaging'));
        assert.equal(lines.at(-1), '401');
        const [updated, revoked] = jsonDocuments(lines.slice(1, -1).join('\n')) as [{ ae_title: string; patient_put_creates: boolean }, { revoked_at: string | null }];
        assert.deepEqual([updated.ae_title, updated.patient_put_creates], ['EASTGATE_CT', true]);
        assert.ok(revoked.revoked_at);
      },
    },
    {
      name: 'a lab result over HL7 v2, found on the patient\'s chart',
      command: /v2\/ingest/,
      check({ stdout }) {
        const [ack, result] = stdout.trim().split('\n');
        assert.equal(ack, 'AA');
        assert.deepEqual(JSON.parse(result!), { name: 'Cholesterol', value: '245', unit: 'mg/dL', reference_range: '<200', interpretation: [{ code: 'H', text: null }], effective: '2026-11-20T08:30:00+01:00' });
      },
    },
    {
      name: 'the activity dashboard\'s figures: the service ready, the lab\'s message counted',
      command: /\/activity"/,
      check({ stdout }) {
        assert.deepEqual(JSON.parse(stdout), { ready: true, senders: [{ sending_application: 'LIS', transport: 'http', received: 1 }] });
      },
    },
    {
      name: 'a viewing token reads the DICOMweb origin until the session ends',
      command: /dicomweb-tokens/,
      check({ stdout }) {
        // The search's JSON, then the status after signing out (curl adds no newline between).
        const [, studies, afterSignOut] = /^([\s\S]*?)(\d{3})$/.exec(stdout.trim()) ?? [];
        assert.ok(Array.isArray(JSON.parse(studies ?? '')), `the site's studies: ${stdout}`);
        assert.equal(afterSignOut, '401');
      },
    },
  ]);
});

test('docs/metrics.md: a scrape from the service\'s own host', async () => {
  await runDocumentedSteps(readDocument('docs/metrics.md'), documented, [
    {
      name: 'the request durations of the HTTP origins',
      command: /\/metrics/,
      check({ stdout }) {
        assert.match(stdout, /^cg_http_request_duration_seconds_count\{surface="[a-z]+",method="[A-Z]+",route="[^"]+",status_code="\d{3}"\} \d+$/m);
      },
    },
  ]);
});

test('docs/scale-out.md: /readyz names the node that answered', async () => {
  const nodeId = readFileSync(join(documented.dataDir, 'node-id'), 'utf8').trim();
  await runDocumentedSteps(readDocument('docs/scale-out.md'), documented, [
    {
      name: 'the node id on /readyz',
      command: /\/readyz/,
      check({ stdout }) {
        const { status, node } = JSON.parse(stdout) as { status: string; node: string };
        assert.deepEqual({ status, node }, { status: 'ready', node: nodeId });
      },
    },
  ]);
});

test('docs/deployment.md: its commands are the ones test/deploy/haproxy.test.ts runs against HAProxy', async () => {
  // HAProxy in the foreground, and the drain procedure on nodes of another machine: the test runs
  // the same file and script on loopback (HAProxy in front of two nodes), which this page names.
  const page = readDocument('docs/deployment.md');
  const deployTest = readDocument('test/deploy/haproxy.test.ts');
  assert.match(page, /test\/deploy\/haproxy\.test\.ts/);
  assert.match(deployTest, /nodeStateScript, 'drain', 'node1'/);
  assert.match(readDocument('test/support/haproxy.ts'), /deploy\/haproxy\/haproxy\.cfg/);
  await runDocumentedSteps(page, documented, [], { notRun: [/haproxy -db -f deploy\/haproxy\/haproxy\.cfg/, /node-state\.sh drain node1/] });
});

test('docs/performance.md and docs/reliability.md: the long-running commands are the npm scripts CI runs', async () => {
  const { scripts } = JSON.parse(readDocument('package.json')) as { scripts: Record<string, string> };
  assert.equal(scripts.bench, 'node bench/run.ts');
  assert.equal(scripts['test:faults'], 'node faults/run.ts');
  assert.match(readDocument('.ci/run'), /^npm run test:faults$/m);
  // Every other shell block of these pages is one of them (nothing else to run).
  await runDocumentedSteps(readDocument('docs/performance.md'), documented, [], { notRun: [/npm run bench/] });
  await runDocumentedSteps(readDocument('docs/reliability.md'), documented, [], { notRun: [/npm run test:faults/] });
});

test('docs/configuration.md: running one area of the tests, as shown', async () => {
  const shown = /`(node_modules\/\.bin\/node test\/run\.ts) '([^']+)'`/.exec(readDocument('docs/configuration.md'));
  assert.ok(shown, 'the page shows how to run one area');
  const [, command, pattern] = shown as unknown as [string, string, string];
  assert.ok(globSync(pattern!, { cwd: repositoryRoot }).length > 0, `${pattern} names test files`);
  // The same command on one small area (running the whole FHIR area here would take minutes).
  const result = await runBash(`${command} 'test/docs/links.test.ts'`, { cwd: repositoryRoot, env: { PATH: process.env.PATH, HOME: process.env.HOME, CG_TEST_DATABASE_URL: testServerUrl() } });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /^ℹ pass 1$/m);
});

test('docs/data-lifecycle.md: /readyz, the message body, export and refused traffic retentions, the storage use, the site export and offboarding, as shown (the purge measurement is left to the bench)', async () => {
  const values: Record<string, string> = {};
  await runDocumentedSteps(readDocument('docs/data-lifecycle.md'), documented, [
    {
      name: '/readyz above the floor',
      command: /\/readyz/,
      check({ stdout }) {
        assert.equal((JSON.parse(stdout) as { status: string }).status, 'ready');
      },
    },
    {
      name: 'site update --message-body-retention-days',
      command: /--message-body-retention-days 90/,
      check({ stdout }) {
        assert.match(stdout, /^message_body_retention_days: 90$/m);
        assert.match(stdout, /^message_body_retention_days: (?!90)/m, 'then "" keeps bodies for ever');
      },
    },
    {
      name: 'site update --export-retention-hours --refused-traffic-retention-days',
      command: /--export-retention-hours 6 --refused-traffic-retention-days 90/,
      check({ stdout }) {
        assert.match(stdout, /^export_retention_hours: 6$/m);
        assert.match(stdout, /^refused_traffic_retention_days: 90$/m);
        assert.match(stdout, /^export_retention_hours: (?!6)/m, 'then "" gives back the service-wide value');
        assert.match(stdout, /^refused_traffic_retention_days: (?!90)/m, 'then "" gives back the service default');
      },
    },
    {
      name: 'site export',
      command: /site export Riverside --to "\$EXPORT" --json/,
      check({ stdout }) {
        const summary = JSON.parse(stdout) as { name: string; records: Record<string, number>; dicom_missing: number };
        assert.equal(summary.name, 'Riverside');
        assert.ok(summary.records['audit-log']! >= 1, 'the site\'s creation is in its audit log');
        assert.equal(summary.dicom_missing, 0);
      },
    },
    {
      name: 'site offboard, then --cancel',
      command: /site offboard Riverside --grace-days 30 --json/,
      check({ stdout }) {
        assert.match(stdout, /"purge_after": ?"\d{4}-/);
        assert.match(stdout, /^purge_after: (?!\d)/m, '--cancel unmarks it');
      },
    },
    {
      name: 'site usage',
      command: /site usage Riverside --refresh --json/,
      check({ stdout }) {
        const [usage] = jsonDocuments(stdout) as [{ computed_at: string | null; items: { item: string; rows: number }[]; dicom_bytes: number }];
        assert.ok(usage.computed_at, '--refresh computed the figures');
        assert.ok(usage.items.some((item) => item.item === 'api_key' && item.rows >= 1), 'the key of the README\'s first steps is counted');
        assert.equal(typeof usage.dicom_bytes, 'number');
      },
    },
  ], { notRun: [/bench\/retention-purge\.ts/], values });
  if (values.EXPORT) rmSync(values.EXPORT, { recursive: true, force: true });
});

test('the pages without shell commands still have none to check', () => {
  for (const page of ['docs/configuration.md', 'docs/security.md']) {
    assert.deepEqual(fencedBlocks(readDocument(page)).filter((block) => block.language === 'sh'), [], `${page} has shell commands: give them a test`);
  }
});
