import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { runCliJson } from '../support/cli.ts';
import { fixturePath, readFixture } from '../support/fixtures.ts';
import { everySurfaceOnAFreePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';

const exec = promisify(execFile);

// The README's first steps, on the embedded database (no CG_DATABASE_URL): the CLI and the
// running service share it, and what the CLI changes the service sees at once.
let service: ServiceProcess;
let env: NodeJS.ProcessEnv;
before(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-e2e-'));
  env = {
    CG_DATA_DIR: dataDir,
    ...everySurfaceOnAFreePort,
  };
  service = await startServiceProcess(env, 8);
});
after(async () => {
  await service?.stop();
});

test('site, user and key from the CLI; FHIR, MLLP and DICOM reach the same site; the CLI lists what arrived', async () => {
  const site = await runCliJson<{ id: string }>(['site', 'create', '--name', 'Riverside', '--ae-title', 'RIVERSIDE'], env);
  await runCliJson(['user', 'create', '--site', 'Riverside', '--email', 'ris@riverside.test', '--role', 'clinician'], env);
  const { key } = await runCliJson<{ key: string }>(['key', 'create', '--site', 'Riverside', '--user', 'ris@riverside.test'], env);
  const fhir = `http://127.0.0.1:${service.ports.fhir}/fhir`;
  const metadata = await fetch(`${fhir}/metadata`, { headers: { 'x-api-key': key } });
  assert.equal(metadata.status, 200);
  assert.equal(((await metadata.json()) as { fhirVersion: string }).fhirVersion, '4.0.1');

  // HL7 v2 over MLLP from a registered client, sent by an MLLP client nobody here wrote.
  await runCliJson(['client', 'create', '--site', 'Riverside', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1'], env);
  const message = readFixture('hl7v2/oehf-ipf/A04.hl7');
  const file = join(env.CG_DATA_DIR!, 'a04.hl7');
  writeFileSync(file, message);
  const sent = await exec('mllp_send', ['--loose', '--file', file, '--port', String(service.ports.mllp), '127.0.0.1']);
  assert.match(sent.stdout, /MSA\|AA\|/);
  const messages = await runCliJson<{ messages: { type: string; ack: string }[] }>(['messages', 'list', '--site', site.id], env);
  assert.equal(messages.messages.length, 1);
  assert.equal(messages.messages[0]!.ack, 'AA');
  const patients = (await (await fetch(`${fhir}/Patient?identifier=305090`, { headers: { 'x-api-key': key } })).json()) as { total: number; entry: { resource: { name: { family: string }[] } }[] };
  assert.equal(patients.total, 1);
  assert.equal(patients.entry[0].resource.name[0].family, 'Hiccock');

  // DICOM with dcmtk's storescu to the site's AE title, then the worklist and a report.
  const connectivity = await fetch(`http://127.0.0.1:${service.ports.connectivity}/connectivity/dimse`, { headers: { 'x-api-key': key } });
  assert.equal(connectivity.status, 200);
  assert.deepEqual(Object.keys((await connectivity.json()) as object).sort(), ['host', 'port']);
  await exec('storescu', ['-aec', 'RIVERSIDE', '127.0.0.1', String(service.ports.dicom), fixturePath('dicom/MR_small_implicit.dcm')], { env: { ...process.env, TCP_NODELAY: '1' } });
  const studies = await runCliJson<{ total: number; studies: { study_uid: string; instances: number; patient_id: string }[] }>(['studies', 'list', '--site', 'Riverside'], env);
  assert.equal(studies.total, 1);
  assert.equal(studies.studies[0]!.instances, 1);
  assert.equal(studies.studies[0]!.patient_id, '4MR1');
  const report = await runCliJson<{ id: string; status: string }>(
    ['report', 'create', '--site', 'Riverside', '--study', studies.studies[0]!.study_uid, '--text', 'No acute findings.', '--status', 'completed', '--author', 'ris@riverside.test'],
    env,
  );
  assert.equal(report.status, 'completed');
  const diagnostic = (await (await fetch(`${fhir}/DiagnosticReport/${report.id}`, { headers: { 'x-api-key': key } })).json()) as { status: string; conclusion: string; subject: { reference: string } };
  assert.equal(diagnostic.status, 'final');
  assert.equal(diagnostic.conclusion, 'No acute findings.');
  // The study was linked to the site's patient 4MR1, created from the DICOM header.
  const imaged = (await (await fetch(`${fhir}/Patient?identifier=4MR1`, { headers: { 'x-api-key': key } })).json()) as { entry: { resource: { id: string } }[] };
  assert.equal(diagnostic.subject.reference, `Patient/${imaged.entry[0]!.resource.id}`);

  // Revoking the key from the CLI locks the running service's door on the next request.
  const keys = await runCliJson<{ id: string }[]>(['key', 'list', '--site', 'Riverside'], env);
  await runCliJson(['key', 'revoke', keys[0]!.id], env);
  assert.equal((await fetch(`${fhir}/Patient`, { headers: { 'x-api-key': key } })).status, 401);
});

test('a second service on the same data directory is refused; SIGTERM stops the first cleanly', async () => {
  const second = await exec(process.execPath, [new URL('../../bin/clinical-gateway.js', import.meta.url).pathname, 'serve'], {
    env: { PATH: process.env.PATH, ...env, CG_FHIR_PORT: '0' },
  }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => error,
  );
  assert.equal(second.code, 1);
  assert.match(second.stderr, /in use by another Clinical Gateway service/);
  const started = Date.now();
  assert.equal(await service.stop('SIGTERM'), 0);
  assert.ok(Date.now() - started < 10_000, 'exits within 10 s');
});
