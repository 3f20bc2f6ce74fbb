import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createReport } from '../../src/domain/imaging/reports.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';
import { indexedStudyOf } from './imaging-study-support.ts';

const fhirOrigin = useFhirOrigin();

/** A study of the site with one instance, belonging to the patient with that business identifier. */
function createStudy(site: SiteContext, patient: { id: string; mrn: string }): Promise<string> {
  return indexedStudyOf(fhirOrigin.db.database, site, patient.id, patient.mrn);
}

async function patient(client: FhirClient, mrn: string): Promise<{ id: string; mrn: string }> {
  const response = await client.request('POST', '/fhir/Patient', { body: patientBody(mrn) });
  return { id: response.json().id, mrn };
}

test('DiagnosticReport is a read view of the imaging reports, with the documented mapping', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const owner = await patient(client, 'DR-1');
  const study = await createStudy(client.site, owner);
  const report = await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: study, text: 'No effusion.', status: 'completed' });

  const response = await client.request('GET', `/fhir/DiagnosticReport/${report.id}`);
  assert.equal(response.statusCode, 200);
  const view = response.json();
  assert.equal(view.resourceType, 'DiagnosticReport');
  assert.equal(view.id, report.id);
  assert.equal(view.status, 'final');
  assert.deepEqual(view.code.coding[0], { system: 'http://loinc.org', code: '18748-4', display: 'Diagnostic imaging study' });
  assert.deepEqual(view.subject, { reference: `Patient/${owner.id}` });
  assert.equal(view.effectiveDateTime, '2026-03-14');
  assert.equal(view.issued, report.completedAt!.toISOString());
  assert.equal(view.conclusion, 'No effusion.');
  assert.equal(Buffer.from(view.presentedForm[0].data, 'base64').toString('utf8'), 'No effusion.');
  assert.match(view.presentedForm[0].contentType, /^text\/plain/);
  assert.deepEqual(view.identifier, [{ system: 'urn:dicom:uid', value: `urn:oid:${study}` }]);
  assert.equal(response.headers.etag, `W/"${report.version}"`);

  const vread = await client.request('GET', `/fhir/DiagnosticReport/${report.id}/_history/${report.version}`);
  assert.equal(vread.statusCode, 200);
  assert.equal((await client.request('GET', `/fhir/DiagnosticReport/${report.id}/_history/${report.version + 1}`)).statusCode, 404);
  assert.equal((await client.request('GET', '/fhir/DiagnosticReport/not-a-uuid')).statusCode, 404);

  const draft = await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: study, text: 'Draft text' });
  const draftView = (await client.request('GET', `/fhir/DiagnosticReport/${draft.id}`)).json();
  assert.equal(draftView.status, 'preliminary');
  assert.equal(draftView.issued, undefined);
});

test('DiagnosticReport search by patient and status; another site sees nothing', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const other = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const ann = await patient(client, 'DR-A');
  const bob = await patient(client, 'DR-B');
  const annStudy = await createStudy(client.site, ann);
  const bobStudy = await createStudy(client.site, bob);
  const annFinal = await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: annStudy, text: 'a', status: 'completed' });
  const annDraft = await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: annStudy, text: 'b' });
  const bobFinal = await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: bobStudy, text: 'c', status: 'completed' });

  const ids = async (query: string, as: FhirClient = client) => {
    const response = await as.request('GET', `/fhir/DiagnosticReport${query}`);
    assert.equal(response.statusCode, 200, response.body);
    return (response.json().entry ?? []).filter((e: { search: { mode: string } }) => e.search.mode === 'match').map((e: { resource: { id: string } }) => e.resource.id).sort();
  };
  assert.deepEqual(await ids(`?patient=${ann.id}`), [annFinal.id, annDraft.id].sort());
  assert.deepEqual(await ids(`?patient=Patient/${bob.id}`), [bobFinal.id]);
  assert.deepEqual(await ids('?status=final'), [annFinal.id, bobFinal.id].sort());
  assert.deepEqual(await ids('?status=preliminary'), [annDraft.id]);
  assert.deepEqual(await ids('?status=registered'), [annDraft.id]);
  assert.deepEqual(await ids(`?patient=${ann.id}&status=final`), [annFinal.id]);
  assert.deepEqual(await ids(''), [annFinal.id, annDraft.id, bobFinal.id].sort());
  assert.deepEqual(await ids(`?_id=${bobFinal.id}`), [bobFinal.id]);

  const paged = (await client.request('GET', '/fhir/DiagnosticReport?_count=2')).json();
  assert.equal(paged.total, 3);
  assert.equal(paged.entry.length, 2);
  const next = new URL(paged.link.find((link: { relation: string }) => link.relation === 'next').url);
  // A report written between the pages goes to the top of the newest-first list; the next page
  // still continues after the last report shown, without repeating one.
  await createReport(fhirOrigin.db.database, client.site, { studyInstanceUid: bobStudy, text: 'd' });
  const rest = (await client.request('GET', next.pathname + next.search)).json();
  assert.equal(rest.entry.length, 1);
  const walked = [...paged.entry, ...rest.entry].map((entry: { resource: { id: string } }) => entry.resource.id);
  assert.deepEqual([...walked].sort(), [annFinal.id, annDraft.id, bobFinal.id].sort());
  assert.equal((await other.request('GET', next.pathname + next.search)).statusCode, 400);

  assert.deepEqual(await ids('', other), []);
  assert.deepEqual(await ids(`?patient=${ann.id}`, other), []);
  assert.equal((await other.request('GET', `/fhir/DiagnosticReport/${annFinal.id}`)).statusCode, 404);
  assert.equal((await other.request('GET', `/fhir/DiagnosticReport/${annFinal.id}/_history/1`)).statusCode, 404);
});
