import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';
import { listDataAccess } from '../../src/domain/audit/data-access-log.ts';
import { createReport } from '../../src/domain/imaging/reports.ts';
import { fhirClient, patientBody, useFhirOrigin, type FhirClient } from './fhir-test-origin.ts';
import { indexedStudyOf } from './imaging-study-support.ts';

// Patient/{id}/$everything: the patient, its compartment in creation order, paged, and its
// imaging reports, never another patient's or another site's resources.

const fhirOrigin = useFhirOrigin();

interface Bundle {
  type: string;
  link: { relation: string; url: string }[];
  entry?: { resource: { resourceType: string; id: string } }[];
}

async function create(client: FhirClient, body: Record<string, unknown>): Promise<string> {
  const response = await client.request('POST', `/fhir/${String(body.resourceType)}`, { body });
  assert.equal(response.statusCode, 201, response.body);
  return `${String(body.resourceType)}/${response.json().id}`;
}

async function everything(client: FhirClient, url: string): Promise<Bundle> {
  const response = await client.request('GET', url);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json();
}

const names = (bundle: Bundle) => (bundle.entry ?? []).map((entry) => `${entry.resource.resourceType}/${entry.resource.id}`);
const relative = (url: string) => new URL(url).pathname + new URL(url).search;

async function seed(client: FhirClient) {
  const patient = (await create(client, patientBody(`EV-${client.site.siteId.slice(0, 8)}`))).slice('Patient/'.length);
  const other = (await create(client, patientBody(`EV-OTHER-${client.site.siteId.slice(0, 8)}`))).slice('Patient/'.length);
  const subject = { reference: `Patient/${patient}` };
  const code = { text: 'x' };
  const earlier = [
    await create(client, { resourceType: 'Observation', status: 'final', code, subject }),
    await create(client, { resourceType: 'Condition', code, subject, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] } }),
    await create(client, { resourceType: 'AllergyIntolerance', code, patient: subject, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] } }),
  ];
  await create(client, { resourceType: 'Observation', status: 'final', code, subject: { reference: `Patient/${other}` } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const between = new Date().toISOString();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const later = [
    await create(client, { resourceType: 'Procedure', status: 'completed', code, subject }),
    await create(client, { resourceType: 'DocumentReference', status: 'current', subject, content: [{ attachment: { contentType: 'text/plain', data: 'aGk=' } }] }),
    await create(client, { resourceType: 'Observation', status: 'final', code, subject }),
  ];
  const report = `DiagnosticReport/${await imagingReport(client, patient, `EV-${client.site.siteId.slice(0, 8)}`)}`;
  return { patient, other, earlier, later, between, report };
}

async function imagingReport(client: FhirClient, patientId: string, mrn: string): Promise<string> {
  const studyInstanceUid = await indexedStudyOf(fhirOrigin.db.database, client.site, patientId, mrn);
  return (await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid, text: 'No acute findings.', status: 'completed' })).id;
}

test('$everything gives the patient, its compartment in creation order and its imaging reports, nobody else\'s', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const seeded = await seed(client);
  const bundle = await everything(client, `/fhir/Patient/${seeded.patient}/$everything`);
  assert.equal(bundle.type, 'searchset');
  assert.deepEqual(names(bundle), [`Patient/${seeded.patient}`, ...seeded.earlier, ...seeded.later, seeded.report]);
  assert.equal(bundle.link.find((link) => link.relation === 'next'), undefined);

  await dataAccessRecorder(fhirOrigin.db.database).settled();
  const { entries } = await listDataAccess(fhirOrigin.db.database, client.site.siteId);
  const logged = entries.find((entry) => entry.query?.includes('$everything'));
  assert.ok(logged, 'the read is in the data access log');
  assert.deepEqual([...logged.resourceIds].sort(), names(bundle).sort());
});

test('$everything pages with _count and filters with _type and _since', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const seeded = await seed(client);
  const pages: string[][] = [];
  let url: string | undefined = `/fhir/Patient/${seeded.patient}/$everything?_count=2`;
  while (url) {
    const page = await everything(client, url);
    pages.push(names(page));
    const next = page.link.find((link) => link.relation === 'next');
    url = next ? relative(next.url) : undefined;
  }
  // The patient and the reports come with the first page; the compartment two at a time.
  assert.deepEqual(pages, [
    [`Patient/${seeded.patient}`, ...seeded.earlier.slice(0, 2), seeded.report],
    [seeded.earlier[2]!, seeded.later[0]!],
    seeded.later.slice(1),
  ]);

  assert.deepEqual(names(await everything(client, `/fhir/Patient/${seeded.patient}/$everything?_type=Observation,Patient`)), [
    `Patient/${seeded.patient}`,
    seeded.earlier[0]!,
    seeded.later[2]!,
  ]);
  assert.deepEqual(names(await everything(client, `/fhir/Patient/${seeded.patient}/$everything?_type=DiagnosticReport`)), [seeded.report]);
  assert.deepEqual(names(await everything(client, `/fhir/Patient/${seeded.patient}/$everything?_since=${encodeURIComponent(seeded.between)}&_type=Procedure,DocumentReference,Observation,Patient`)), seeded.later);
});

test('$everything of an unknown patient, or of another site\'s, is a 404; bad parameters are 400s', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const elsewhere = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const seeded = await seed(client);
  for (const url of [`/fhir/Patient/${seeded.patient}/$everything`, '/fhir/Patient/00000000-0000-4000-8000-000000000000/$everything', '/fhir/Patient/not-an-id/$everything']) {
    const response = await elsewhere.request('GET', url);
    assert.equal(response.statusCode, 404, `${url}: ${response.body}`);
    assert.equal(response.json().resourceType, 'OperationOutcome');
  }
  for (const query of ['_count=0', '_count=x', '_type=Encounter', '_since=yesterday', '_page=-1', 'colour=red', '_count=1&_count=2']) {
    const response = await client.request('GET', `/fhir/Patient/${seeded.patient}/$everything?${query}`);
    assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
    assert.equal(response.json().resourceType, 'OperationOutcome');
  }
  const lenient = await client.request('GET', `/fhir/Patient/${seeded.patient}/$everything?colour=red`, { headers: { prefer: 'handling=lenient' } });
  assert.equal(lenient.statusCode, 200, lenient.body);
});
