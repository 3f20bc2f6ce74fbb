import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runCliJson } from '../support/cli.ts';
import { referenceTables, serviceTablesWithSiteColumn } from '../support/citus-tables.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { everySurfaceOnAFreePort, startServiceProcess, type ServiceProcess } from '../support/service-process.ts';
import type { RecordedStatement } from '../support/statement-recorder.ts';
import { writeSyntheticInstance } from '../dicom/support/synthetic-instance.ts';

// Citus routes a statement to one site's shard only when the planner can see the site: every
// scan of a distributed table must be restricted by site_id (docs.citusdata.com, "Query
// Processing: router executor"). This test records every statement the service and the CLI send
// while they do a day's work of every surface, then asks PostgreSQL for each statement's plan
// (EXPLAIN VERBOSE, with the values it was sent with) and fails on any scan of a clinical table
// whose conditions do not fix site_id. The planner propagates equalities, so a join on site_id
// to a table that is restricted counts, as it does for Citus.
const exec = promisify(execFile);
const recorder = fileURLToPath(new URL('../support/statement-recorder.ts', import.meta.url));

/**
 * Statements that read clinical tables of every site on purpose, with the reason. Each is
 * recognised by a fragment of its text; Citus runs them on every shard (a multi-shard query).
 */
const crossSiteStatements: { fragment: string; reason: string }[] = [
  {
    fragment: 'FROM (SELECT site_id, id FROM bulk_export_job',
    reason: 'an idle worker looks for a Bulk Data export job of any site to claim (once a second per process; the partial index holds only unfinished jobs)',
  },
  { fragment: 'FROM bulk_export_job WHERE expires_at < now()', reason: 'the clean-up finds expired exports of every site (one node, every ten minutes)' },
  { fragment: 'DELETE FROM traffic_minute WHERE minute <', reason: 'the activity counters older than two days are deleted for every site (each process, once a minute)' },
  {
    fragment: 'count(*)::bigint AS rows, coalesce(sum(pg_column_size(t.*)), 0)::bigint AS bytes',
    reason: 'storage use counts every site\'s rows of each table at once (one node, hourly, or `site usage --refresh`)',
  },
  { fragment: 'coalesce(sum(size_bytes), 0)::bigint AS bytes FROM imaging_instance GROUP BY site_id', reason: 'storage use sums every site\'s DICOM bytes at once (as above)' },
  { fragment: 'DELETE FROM site_storage_usage', reason: 'storage use replaces every site\'s figures at once (as above)' },
];

let db: TestDatabase;
let service: ServiceProcess;
let env: NodeJS.ProcessEnv;
let logFile: string;
before(async () => {
  db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'cg-citus-'));
  logFile = join(dataDir, 'statements.jsonl');
  writeFileSync(logFile, '');
  env = {
    CG_DATABASE_URL: db.connectionString,
    CG_DATA_DIR: dataDir,
    CG_TEST_STATEMENT_LOG: logFile,
    NODE_OPTIONS: `--import=${recorder}`,
    ...everySurfaceOnAFreePort,
  };
  service = await startServiceProcess(env, 8);
});
after(async () => {
  await service?.stop();
  await db?.drop();
});

function hl7(segments: string[], type: string, controlId: string): string {
  return [`MSH|^~\\&|LAB|NORTHLAB|GATEWAY|NORTH|20240102030405||${type}|${controlId}|P|2.5.1`, ...segments].join('\r');
}

/** Every surface, the CLI and the administration app, as a site and its operators use them. */
const clinicianPassword = 'a long clinician password';

async function signIn(admin: string, email: string, password: string): Promise<Record<string, string>> {
  const signedIn = await fetch(`${admin}/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  assert.equal(signedIn.status, 200);
  const csrf = ((await signedIn.json()) as { csrf_token: string }).csrf_token;
  return { cookie: String(signedIn.headers.get('set-cookie')).split(';')[0]!, 'x-csrf-token': csrf, 'content-type': 'application/json' };
}

async function runWorkload(): Promise<void> {
  const site = await runCliJson<{ id: string }>(['site', 'create', '--name', 'North', '--ae-title', 'NORTH'], env);
  await runCliJson(['user', 'create', '--site', 'North', '--email', 'ris@north.test', '--role', 'clinician', '--password', clinicianPassword], env);
  const { key, id: keyId } = await runCliJson<{ key: string; id: string }>(['key', 'create', '--site', 'North', '--user', 'ris@north.test'], env);
  await runCliJson(['client', 'create', '--site', 'North', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1'], env);
  const headers = { 'x-api-key': key, 'content-type': 'application/fhir+json' };
  const fhir = `http://127.0.0.1:${service.ports.fhir}/fhir`;
  const expect = async (response: Promise<Response>, status: number) => {
    const answered = await response;
    const body = await answered.text();
    assert.equal(answered.status, status, `${answered.url}: ${body}`);
    return body.startsWith('{') ? (JSON.parse(body) as Record<string, unknown>) : {};
  };

  // FHIR: create, read, update, every search parameter, paging, the imaging view.
  const patient = await expect(
    fetch(`${fhir}/Patient`, { method: 'POST', headers, body: JSON.stringify({ resourceType: 'Patient', identifier: [{ value: 'N-1' }], name: [{ family: 'Nord', given: ['Ada'] }], gender: 'female', birthDate: '1970-03-04' }) }),
    201,
  );
  const patientId = patient.id as string;
  await expect(fetch(`${fhir}/Patient/${patientId}`, { headers }), 200);
  await expect(fetch(`${fhir}/Patient/${patientId}`, { method: 'PUT', headers, body: JSON.stringify({ resourceType: 'Patient', id: patientId, identifier: [{ value: 'N-1' }], name: [{ family: 'Nord', given: ['Ada', 'B'] }], gender: 'female', birthDate: '1970-03-04' }) }), 200);
  for (const type of ['Observation', 'Condition', 'AllergyIntolerance', 'Procedure', 'DocumentReference']) {
    const body: Record<string, unknown> = { resourceType: type, subject: { reference: `Patient/${patientId}` }, code: { coding: [{ system: 'http://loinc.org', code: '1-8' }] } };
    if (type === 'Observation') Object.assign(body, { status: 'final', valueQuantity: { value: 1, unit: 'mg' } });
    if (type === 'Condition') Object.assign(body, { clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] } });
    if (type === 'AllergyIntolerance') Object.assign(body, { patient: { reference: `Patient/${patientId}` }, subject: undefined, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] } });
    if (type === 'Procedure') Object.assign(body, { status: 'completed' });
    if (type === 'DocumentReference') Object.assign(body, { status: 'current', type: { coding: [{ system: 'http://loinc.org', code: '11488-4' }] }, content: [{ attachment: { contentType: 'text/plain', data: 'aGVsbG8=' } }], code: undefined });
    await expect(fetch(`${fhir}/${type}`, { method: 'POST', headers, body: JSON.stringify(body) }), 201);
    await expect(fetch(`${fhir}/${type}?patient=${patientId}`, { headers }), 200);
  }
  for (const query of ['identifier=N-1', 'name=nor', 'birthdate=1970-03-04', 'gender=female', '_count=1', '_sort=-_lastUpdated&_count=1']) {
    const bundle = await expect(fetch(`${fhir}/Patient?${query}`, { headers }), 200);
    const next = (bundle.link as { relation: string; url: string }[] | undefined)?.find((link) => link.relation === 'next');
    if (next) await expect(fetch(next.url, { headers }), 200);
  }
  await expect(fetch(`${fhir}/Observation?code=http://loinc.org|1-8&patient=${patientId}`, { headers }), 200);
  await expect(fetch(`${fhir}/Condition?clinical-status=active&code=1-8`, { headers }), 200);
  await expect(fetch(`${fhir}/DocumentReference?type=11488-4`, { headers }), 200);
  // Bulk Data export: kick-off, polling until the job (run by the service's worker) completes, a file, DELETE.
  const kickOff = await fetch(`${fhir}/Patient/$export?_since=2000-01-01T00:00:00Z`, { headers: { ...headers, prefer: 'respond-async' } });
  assert.equal(kickOff.status, 202);
  const exportStatus = kickOff.headers.get('content-location')!;
  let exportManifest: { output: { url: string }[] } | undefined;
  for (let poll = 0; poll < 600 && !exportManifest; poll++) {
    const polled = await fetch(exportStatus, { headers });
    if (polled.status === 200) exportManifest = (await polled.json()) as { output: { url: string }[] };
    else await polled.text().then(() => new Promise((resolve) => setTimeout(resolve, 100)));
  }
  assert.ok(exportManifest, 'the export completed');
  for (const file of exportManifest.output) assert.equal((await fetch(file.url, { headers }).then(async (response) => [response.status, await response.text()]))[0], 200);
  await expect(fetch(exportStatus, { method: 'DELETE', headers: { 'x-api-key': key } }), 202);

  // HL7 v2 over HTTP (admit, results, merge) and over MLLP; HL7 v3 over HTTP.
  const v2 = `http://127.0.0.1:${service.ports.hl7}/v2/ingest`;
  const v2Headers = { 'x-api-key': key, 'content-type': 'x-application/hl7-v2+er7' };
  const pid = (id: string) => `PID|1||${id}^^^NORTH^MR||Nord^Ada||19700304|F|||1 Road^^Town^^1000^NO||555-1000`;
  await expect(fetch(v2, { method: 'POST', headers: v2Headers, body: hl7([`EVN|A01|20240102030405`, pid('N-2'), 'PV1|1|I|WARD^1^1||||||||||||||||V-1'], 'ADT^A01^ADT_A01', 'C-1') }), 200);
  await expect(fetch(v2, { method: 'POST', headers: v2Headers, body: hl7([`EVN|A01|20240102030405`, pid('N-2'), 'PV1|1|I|WARD^1^1||||||||||||||||V-1'], 'ADT^A01^ADT_A01', 'C-1') }), 200);
  await expect(
    fetch(v2, { method: 'POST', headers: v2Headers, body: hl7([pid('N-2'), 'ORC|RE|O-1', 'OBR|1|O-1||2345-7^Glucose^LN', 'OBX|1|NM|2345-7^Glucose^LN||5.4|mmol/L|||||F'], 'ORU^R01^ORU_R01', 'C-2') }),
    200,
  );
  await expect(fetch(v2, { method: 'POST', headers: v2Headers, body: hl7([`EVN|A40|20240102030405`, pid('N-1'), 'MRG|N-2^^^NORTH^MR'], 'ADT^A40^ADT_A39', 'C-3') }), 200);
  const mllpFile = join(env.CG_DATA_DIR!, 'a04.hl7');
  writeFileSync(mllpFile, hl7([`EVN|A04|20240102030405`, pid('N-3')], 'ADT^A04^ADT_A01', 'C-4'));
  const sent = await exec('mllp_send', ['--loose', '--file', mllpFile, '--port', String(service.ports.mllp), '127.0.0.1']);
  assert.match(sent.stdout, /MSA\|AA\|/);
  const v3 = `<PRPA_IN201311UV02 xmlns="urn:hl7-org:v3" ITSVersion="XML_1.0"><id root="2.16.840.1.113883.3.72.5.9.1" extension="v3-1"/><creationTime value="20240102030405"/><interactionId root="2.16.840.1.113883.1.6" extension="PRPA_IN201311UV02"/><processingCode code="P"/><processingModeCode code="T"/><acceptAckCode code="AL"/><receiver typeCode="RCV"><device classCode="DEV" determinerCode="INSTANCE"><id root="1.2.3"/></device></receiver><sender typeCode="SND"><device classCode="DEV" determinerCode="INSTANCE"><id root="1.2.4"/></device></sender><controlActProcess classCode="CACT" moodCode="EVN"><subject typeCode="SUBJ"><registrationRequest classCode="REG" moodCode="RQO"><subject1 typeCode="SBJ"><patient classCode="PAT"><id root="1.2.5" extension="N-4"/><statusCode code="active"/><patientPerson classCode="PSN" determinerCode="INSTANCE"><name><given>Bo</given><family>Nord</family></name><administrativeGenderCode code="M"/><birthTime value="19800101"/></patientPerson></patient></subject1></registrationRequest></subject></controlActProcess></PRPA_IN201311UV02>`;
  await fetch(`http://127.0.0.1:${service.ports.hl7}/v3/ingest`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, body: v3 }).then((response) => response.text());

  // DICOM C-STORE (dcmtk) and MPPS over HTTP, before and after the images.
  const study = '1.2.826.0.1.3680043.10.1.1';
  const instance = join(env.CG_DATA_DIR!, 'instance.dcm');
  await writeSyntheticInstance(instance, { study, series: `${study}.1`, instance: `${study}.1.1` }, 4, 4);
  await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'NORTH', '127.0.0.1', String(service.ports.dicom), instance], { env: { ...process.env, TCP_NODELAY: '1' } });
  await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'NORTH', '127.0.0.1', String(service.ports.dicom), instance], { env: { ...process.env, TCP_NODELAY: '1' } });
  const mpps = `http://127.0.0.1:${service.ports.mpps}/ingest`;
  for (const [status, answer] of [['IN PROGRESS', 201], ['COMPLETED', 200]] as const) {
    await expect(fetch(mpps, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ sop_instance_uid: `${study}.9`, study_uid: study, status }) }), answer);
  }
  await expect(fetch(`http://127.0.0.1:${service.ports.connectivity}/connectivity/dimse`, { headers: { 'x-api-key': key } }), 200);
  // Query/retrieve: a C-MOVE destination (CLI), C-FIND, C-GET, a C-MOVE to that destination (which
  // does not listen: the move fails after the look-up), and DICOMweb's QIDO-RS and WADO-RS.
  await runCliJson(['dicom-destination', 'create', '--site', 'North', '--ae-title', 'PACS_1', '--host', '127.0.0.1', '--port', '9'], env);
  await runCliJson(['dicom-destination', 'list', '--site', 'North'], env);
  const dimse = ['-aet', 'MODALITY1', '-aec', 'NORTH', '-k', 'QueryRetrieveLevel=STUDY', '-k', `StudyInstanceUID=${study}`];
  await exec('findscu', ['-S', ...dimse, '-k', 'PatientName=*', '127.0.0.1', String(service.ports.dicom)]);
  await exec('getscu', ['-S', ...dimse, '-od', mkdtempSync(join(env.CG_DATA_DIR!, 'retrieved-')), '127.0.0.1', String(service.ports.dicom)]);
  await exec('movescu', ['-S', ...dimse, '-aem', 'PACS_1', '127.0.0.1', String(service.ports.dicom)]).catch(() => undefined);
  const dicomweb = `http://127.0.0.1:${service.ports.dicomweb}`;
  await expect(fetch(`${dicomweb}/studies?PatientName=*`, { headers: { 'x-api-key': key } }), 200);
  await expect(fetch(`${dicomweb}/studies/${study}/series`, { headers: { 'x-api-key': key } }), 200);
  await expect(fetch(`${dicomweb}/studies/${study}/metadata`, { headers: { 'x-api-key': key } }), 200);
  await expect(fetch(`${dicomweb}/studies/${study}`, { headers: { 'x-api-key': key } }), 200);

  // The CLI's site views and a report; then FHIR's view of it.
  await runCliJson(['studies', 'list', '--site', 'North'], env);
  await runCliJson(['messages', 'list', '--site', 'North'], env);
  await runCliJson(['site', 'usage', 'North', '--refresh'], env);
  const report = await runCliJson<{ id: string }>(['report', 'create', '--site', 'North', '--study', study, '--text', 'Normal.', '--status', 'draft', '--author', 'ris@north.test'], env);
  await expect(fetch(`${fhir}/DiagnosticReport/${report.id}`, { headers }), 200);
  await expect(fetch(`${fhir}/DiagnosticReport?patient=${patientId}&status=preliminary`, { headers }), 200);
  // Result parameters and type/system history (issue 22).
  await expect(fetch(`${fhir}/Observation?patient=${patientId}&_include=Observation:patient&_sort=code,-_lastUpdated`, { headers }), 200);
  await expect(fetch(`${fhir}/Patient?_id=${patientId}&_revinclude=Observation:patient&_revinclude=DiagnosticReport:patient`, { headers }), 200);
  await expect(fetch(`${fhir}/DiagnosticReport?patient=${patientId}&_include=DiagnosticReport:patient`, { headers }), 200);
  await expect(fetch(`${fhir}/Patient?_sort=-name,birthdate`, { headers }), 200);
  await expect(fetch(`${fhir}/Patient/_history?_since=2020-01-01`, { headers }), 200);
  await expect(fetch(`${fhir}/_history?_at=${new Date().toISOString().slice(0, 10)}&_count=2`, { headers }), 200);

  // The administration app: the site's clinician, then the first-run service admin.
  const admin = `http://127.0.0.1:${service.ports.admin}`;
  const siteApi = `${admin}/api/sites/${site.id}`;
  const clinician = await signIn(admin, 'ris@north.test', clinicianPassword);
  for (const filter of ['', '?step_status=COMPLETED&report_status=draft&modality=OT', '?patient=synth&from=2000-01-01&to=2100-01-01', '?step_status=none&report_status=none']) {
    await expect(fetch(`${siteApi}/studies${filter}`, { headers: clinician }), 200);
  }
  await expect(fetch(`${siteApi}/studies/${study}`, { headers: clinician }), 200);
  await expect(fetch(`${siteApi}/reports/${report.id}`, { method: 'PUT', headers: clinician, body: JSON.stringify({ text: 'Normal study.', version: 1 }) }), 200);
  await expect(fetch(`${siteApi}/reports/${report.id}/complete`, { method: 'POST', headers: clinician, body: JSON.stringify({ version: 2 }) }), 200);
  const password = readFileSync(join(env.CG_DATA_DIR!, 'initial-admin-password'), 'utf8').trim();
  const session = await signIn(admin, 'admin@localhost', password);
  for (const path of ['', '/users', '/keys', '/clients', '/messages', '/audit', '/connectivity']) {
    await expect(fetch(`${siteApi}${path}`, { headers: session }), 200);
  }
  const messages = (await expect(fetch(`${siteApi}/messages`, { headers: session }), 200)) as { messages?: { id: string }[] };
  if (messages.messages?.[0]) await expect(fetch(`${siteApi}/messages/${messages.messages[0].id}`, { headers: session }), 200);
  for (const path of ['/api/sites', '/api/audit', '/api/service-admins', '/api/session']) await expect(fetch(`${admin}${path}`, { headers: session }), 200);
  await expect(fetch(`${siteApi}/keys/${keyId}/revoke`, { method: 'POST', headers: session, body: '{}' }), 200);
  // The FHIR request may land on another worker than the revocation did: that worker learns of it
  // by notification, a moment later. Asked again until refused, a bounded number of times.
  for (let attempt = 0; ; attempt++) {
    const status = (await fetch(`${fhir}/Patient`, { headers })).status;
    if (status === 401) break;
    assert.ok(attempt < 400 && status === 200, `the revoked key still answered ${status} after ${attempt + 1} attempts`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  Plans?: PlanNode[];
  [condition: string]: unknown;
}

const conditionKeys = ['Index Cond', 'Recheck Cond', 'Filter', 'TID Cond', 'Join Filter', 'Hash Cond', 'Merge Cond'];

interface ClinicalScan {
  alias: string;
  description: string;
  /** site_id equals a value of the statement ($n or a literal). */
  fixed: boolean;
  /** Aliases whose site_id this scan's site_id is equated with (a co-located join). */
  joinedTo: Set<string>;
}

function conditionsOf(node: PlanNode): string[] {
  return conditionKeys.map((key) => node[key]).filter((value): value is string => typeof value === 'string');
}

/** Every scan of a clinical table in a plan, with what its conditions say about site_id. */
function clinicalScans(node: PlanNode, clinical: Set<string>, found: ClinicalScan[] = []): ClinicalScan[] {
  const relation = node['Relation Name'];
  if (relation && clinical.has(relation) && node['Node Type'] !== 'ModifyTable') {
    const conditions = conditionsOf(node);
    // Bitmap heap scans carry their index conditions on the child bitmap index scans.
    for (const child of node.Plans ?? []) if (child['Node Type'].startsWith('Bitmap')) conditions.push(...allConditions(child));
    const alias = node.Alias ?? relation;
    const fixed = new RegExp(`(^|[^\\w.])(${alias}\\.)?site_id = (\\$\\d+|'[^']*'::uuid|ANY \\()`);
    const joinedTo = new Set<string>();
    for (const condition of conditions) {
      for (const match of condition.matchAll(/(\w+)\.site_id = (\w+)\.site_id/g)) {
        if (match[1] === alias) joinedTo.add(match[2]!);
        if (match[2] === alias) joinedTo.add(match[1]!);
      }
    }
    found.push({
      alias,
      description: `${node['Node Type']} on ${relation} ${alias}${conditions.length ? ` (${conditions.join('; ')})` : ' (no condition)'}`,
      fixed: conditions.some((condition) => fixed.test(condition)),
      joinedTo,
    });
  }
  for (const child of node.Plans ?? []) clinicalScans(child, clinical, found);
  return found;
}

function allConditions(node: PlanNode): string[] {
  return [...conditionsOf(node), ...(node.Plans ?? []).flatMap(allConditions)];
}

/**
 * Scans whose site is not fixed: neither by a value, nor by equality to the site_id of a scan
 * that is (as a correlated subquery or a lateral join on site_id inherits its outer row's site;
 * Citus routes such a statement to one shard when the tables are co-located).
 */
function unrestrictedScans(plan: PlanNode, clinical: Set<string>): string[] {
  const scans = clinicalScans(plan, clinical);
  const fixedAliases = new Set(scans.filter((scan) => scan.fixed).map((scan) => scan.alias));
  for (let grew = true; grew; ) {
    grew = false;
    for (const scan of scans) {
      if (!fixedAliases.has(scan.alias) && [...scan.joinedTo].some((alias) => fixedAliases.has(alias))) {
        fixedAliases.add(scan.alias);
        grew = true;
      }
    }
  }
  return scans.filter((scan) => !fixedAliases.has(scan.alias)).map((scan) => scan.description);
}

const plannable = /^\s*(\(|select|insert|update|delete|with|values)\b/i;

test('every statement the surfaces, the domain and the CLI send fixes site_id on each clinical table it reads', { timeout: 240_000 }, async () => {
  await runWorkload();
  await service.stop();
  const { rows } = await db.database.query<{ name: string }>(
    `SELECT DISTINCT c.relname AS name FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE a.attname = 'site_id' AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace`,
  );
  const clinical = new Set(rows.map((row) => row.name).filter((name) => !serviceTablesWithSiteColumn.has(name) && !referenceTables.has(name)));
  assert.ok(clinical.has('imaging_instance') && clinical.has('inbound_message'));

  const recorded = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RecordedStatement);
  const distinct = new Map<string, RecordedStatement>();
  for (const statement of recorded) if (plannable.test(statement.text) && !distinct.has(statement.text)) distinct.set(statement.text, statement);
  // The workload reaches every clinical table, so the check below has something to check.
  const touched = new Set([...distinct.keys()].flatMap((text) => [...clinical].filter((table) => new RegExp(`\\b${table}\\b`).test(text))));
  assert.deepEqual([...clinical].filter((table) => !touched.has(table)), [], 'clinical tables the workload never reached');

  const violations: string[] = [];
  for (const [text, statement] of distinct) {
    if (crossSiteStatements.some((allowed) => text.includes(allowed.fragment))) continue;
    const values = statement.values.map((value) => (value !== null && typeof value === 'object' ? Buffer.from(value.base64, 'base64') : value));
    // EXPLAIN plans the statement with the values it was sent with, without running it.
    const explained = await db.database.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (VERBOSE, FORMAT JSON) ${text}`, values);
    const scans = unrestrictedScans(explained.rows[0]!['QUERY PLAN'][0]!.Plan, clinical);
    if (scans.length) violations.push(`${text.replace(/\s+/g, ' ').slice(0, 300)}\n    ${scans.join('\n    ')}`);
  }
  assert.ok(distinct.size > 50, `only ${distinct.size} distinct statements were recorded`);
  assert.deepEqual(violations, []);
});
