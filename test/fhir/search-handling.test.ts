import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';

// Issue 19 point 7: an unknown or unsupported search parameter never widens a search.

const fhirOrigin = useFhirOrigin();

interface Outcome {
  resourceType: string;
  issue: { severity: string; code: string; diagnostics: string }[];
}

interface Bundle {
  link: { relation: string; url: string }[];
  entry?: { resource: { id: string; resourceType: string }; search: { mode: string } }[];
}

async function create(client: FhirClient, body: Record<string, unknown>): Promise<string> {
  const response = await client.request('POST', `/fhir/${body.resourceType}`, { body });
  assert.equal(response.statusCode, 201, response.body);
  return response.json().id;
}

function refused(response: { statusCode: number; body: string; json(): unknown }, query: string): Outcome {
  assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
  const outcome = response.json() as Outcome;
  assert.equal(outcome.resourceType, 'OperationOutcome');
  return outcome;
}

async function twoPatientsWithObservations(client: FhirClient) {
  const mine = await create(client, patientBody('H-1'));
  const theirs = await create(client, patientBody('H-2'));
  const observation = (patient: string) => ({ resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: `Patient/${patient}` } });
  return { mine, theirs, myObservation: await create(client, observation(mine)), theirObservation: await create(client, observation(theirs)) };
}

test('Observation?encounter=Encounter/X is refused with 400 naming encounter and listing the supported parameters, not answered with every observation', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const { mine } = await twoPatientsWithObservations(client);
  const response = await client.request('GET', `/fhir/Observation?encounter=Encounter/${mine}`);
  const outcome = refused(response, 'encounter');
  assert.equal(outcome.issue.length, 1);
  assert.equal(outcome.issue[0]!.severity, 'error');
  assert.equal(outcome.issue[0]!.code, 'not-supported');
  assert.match(outcome.issue[0]!.diagnostics, /search parameter encounter is not supported for Observation/);
  assert.match(outcome.issue[0]!.diagnostics, /supported: _id, _lastUpdated, patient, subject, code, category, status, date, _count, _sort, _total, _summary, _elements, _include, _format, _pretty/);
  assert.match(outcome.issue[0]!.diagnostics, /Prefer: handling=lenient/);
  // Prefer: handling=strict says the same.
  refused(await client.request('GET', `/fhir/Observation?encounter=Encounter/${mine}`, { headers: { prefer: 'handling=strict' } }), 'strict');
});

test('Observation?subject=Patient/X is the patient search under R4\'s other name; subject of another type matches nothing', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const { mine, myObservation } = await twoPatientsWithObservations(client);
  for (const query of [`subject=Patient/${mine}`, `subject=${mine}`]) {
    const response = await client.request('GET', `/fhir/Observation?${query}`);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual((response.json() as Bundle).entry!.map((entry) => entry.resource.id), [myObservation], query);
  }
  const group = await client.request('GET', `/fhir/Observation?subject=Group/${mine}`);
  assert.equal(group.statusCode, 200, group.body);
  assert.deepEqual((group.json() as Bundle).entry ?? [], []);
});

test('every unsupported parameter is named, one issue each: unknown names, modifiers, chains, unsupported result parameters and values', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const cases: [string, string, RegExp][] = [
    ['Observation', 'code:text=Hb', /code:text: the modifier :text is not supported on code/],
    ['Observation', 'patient:missing=true', /patient:missing: the modifier :missing is not supported on patient/],
    ['Observation', 'patient.name=Doe', /search parameter patient\.name is not supported/],
    ['Patient', '_has:Observation:patient:code=1', /search parameter _has:Observation:patient:code is not supported/],
    ['Patient', '_summary=bogus', /_summary=bogus is not a summary mode/],
    ['Patient', '_elements=colour', /_elements: colour is not a top-level element of Patient/],
    ['Patient', '_include=Patient:link', /_include=Patient:link is not supported for Patient \(offered: none\)/],
    ['Observation', '_revinclude=Provenance:target', /_revinclude=Provenance:target is not supported for Observation \(offered: none\)/],
    ['Observation', '_include=*', /_include=\* is not supported for Observation \(offered: Observation:patient, Observation:subject\)/],
    ['Observation', '_include:iterate=Observation:patient', /modifiers of _include and _revinclude \(:iterate\) are not supported/],
    ['Patient', '_sort=colour', /_sort=colour: colour is not a sort key of Patient \(_id, _lastUpdated, identifier, name, family, given, birthdate, gender/],
    ['Patient', '_contained=true', /search parameter _contained is not supported/],
    ['DiagnosticReport', '_sort=-_lastUpdated', /_sort is not supported for DiagnosticReport/],
    ['DiagnosticReport', '_lastUpdated=gt2020', /search parameter _lastUpdated is not supported for DiagnosticReport/],
  ];
  for (const [type, query, diagnostics] of cases) {
    const outcome = refused(await client.request('GET', `/fhir/${type}?${query}`), query);
    assert.match(outcome.issue[0]!.diagnostics, diagnostics, query);
    assert.match(outcome.issue[0]!.diagnostics, /supported: _id, /, query);
  }
  const several = refused(await client.request('GET', '/fhir/Patient?colour=blue&gender=female&name:exact=Doe&_elements=colour'), 'several');
  assert.deepEqual(
    several.issue.map((issue) => issue.diagnostics.split(';')[0]),
    ['search parameter colour is not supported for Patient', 'name:exact: the modifier :exact is not supported on name (no modifiers are)', '_elements: colour is not a top-level element of Patient'],
  );
  // POST _search and conditional create refuse them too.
  const form = await client.request('POST', '/fhir/Observation/_search', { body: 'encounter=Encounter/x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  refused(form, 'POST _search');
});

test('Prefer: handling=lenient ignores them, reports them, and the self link shows only what was applied', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const { mine, myObservation, theirObservation } = await twoPatientsWithObservations(client);
  const response = await client.request('GET', `/fhir/Observation?encounter=Encounter/${mine}&code:text=Hb&_sort=-_lastUpdated&_count=5&_elements=colour`, {
    headers: { prefer: 'handling=lenient' },
  });
  assert.equal(response.statusCode, 200, response.body);
  const bundle = response.json() as Bundle;
  const matches = (bundle.entry ?? []).filter((entry) => entry.search.mode === 'match').map((entry) => entry.resource.id);
  // The ignored criteria selected nothing: the client was told so, and what it got is what the self link says.
  assert.deepEqual(matches, [theirObservation, myObservation]);
  const outcome = JSON.stringify(bundle.entry!.find((entry) => entry.search.mode === 'outcome')!.resource);
  for (const name of ['encounter', 'code:text', '_elements']) assert.ok(outcome.includes(name), name);
  const self = new URL(bundle.link.find((link) => link.relation === 'self')!.url);
  assert.deepEqual([...self.searchParams.keys()].sort(), ['_count', '_sort']);

  // DiagnosticReport: its _sort is ignored and no longer echoed.
  const reports = await client.request('GET', '/fhir/DiagnosticReport?_sort=-_lastUpdated&status=final', { headers: { prefer: 'handling=lenient' } });
  assert.equal(reports.statusCode, 200);
  const reportSelf = new URL((reports.json() as Bundle).link.find((link) => link.relation === 'self')!.url);
  assert.deepEqual([...reportSelf.searchParams.keys()], ['status']);
});

test('_summary=count answers the total without entries; _summary=false is the default', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  await twoPatientsWithObservations(client);
  const counted = (await client.request('GET', '/fhir/Observation?_summary=count&_count=10')).json();
  assert.equal(counted.total, 2);
  assert.equal(counted.entry?.length ?? 0, 0);
  assert.equal((await client.request('GET', '/fhir/Observation?_summary=false')).json().entry.length, 2);
});
