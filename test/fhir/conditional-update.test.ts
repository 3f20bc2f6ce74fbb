import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from 'fhir-kit-client';
import { fhirClient, patientBody, useListeningFhirOrigin, type FhirClient } from './fhir-test-origin.ts';

// Issue 22 point 2: PUT /fhir/{Type}?{criteria} (https://hl7.org/fhir/R4/http.html#cond-update).

const listening = useListeningFhirOrigin();

const observation = (patient: string, value: number) => ({
  resourceType: 'Observation',
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '718-7' }] },
  subject: { reference: `Patient/${patient}` },
  valueQuantity: { value, unit: 'g/dL' },
});

async function patientOf(client: FhirClient, identifier: string): Promise<string> {
  return (await client.request('POST', '/fhir/Patient', { body: patientBody(identifier) })).json().id;
}

test('conditional update: no match creates (201), one match gets a new version (200), several are a 412', async () => {
  const client = await fhirClient(listening.app, listening.db.database, { patientPutCreates: true });
  const created = await client.request('PUT', '/fhir/Patient?identifier=urn:mrn|CU-1', { body: patientBody('CU-1', { gender: 'male' }) });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().meta.versionId, '1');
  assert.match(String(created.headers.location), new RegExp(`/fhir/Patient/${created.json().id}/_history/1$`));

  const updated = await client.request('PUT', '/fhir/Patient?identifier=urn:mrn|CU-1', { body: patientBody('CU-1', { gender: 'female' }) });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(updated.json().id, created.json().id);
  assert.equal(updated.json().meta.versionId, '2');
  assert.equal(updated.headers.etag, 'W/"2"');
  assert.equal((await client.request('GET', `/fhir/Patient/${created.json().id}`)).json().gender, 'female');
  // The body may carry the match's id.
  const withId = await client.request('PUT', '/fhir/Patient?identifier=CU-1', { body: { ...patientBody('CU-1'), id: created.json().id } });
  assert.equal(withId.statusCode, 200);
  assert.equal(withId.json().meta.versionId, '3');
  // If-Match applies to the match.
  const stale = await client.request('PUT', '/fhir/Patient?identifier=CU-1', { body: patientBody('CU-1'), headers: { 'if-match': 'W/"1"' } });
  assert.equal(stale.statusCode, 412);

  const patient = await patientOf(client, 'CU-2');
  await client.request('POST', '/fhir/Observation', { body: observation(patient, 1) });
  await client.request('POST', '/fhir/Observation', { body: observation(patient, 2) });
  const ambiguous = await client.request('PUT', `/fhir/Observation?patient=${patient}&code=http://loinc.org|718-7`, { body: observation(patient, 3) });
  assert.equal(ambiguous.statusCode, 412);
  assert.equal(ambiguous.json().resourceType, 'OperationOutcome');
  assert.match(ambiguous.json().issue[0].diagnostics, /match 2 or more Observation/);
  assert.equal((await client.request('GET', `/fhir/Observation?patient=${patient}`)).json().total, 2, 'nothing written');
});

test('conditional update matches only the key\'s site: another site\'s matching resource is as absent', async () => {
  const owner = await fhirClient(listening.app, listening.db.database, { patientPutCreates: true });
  const other = await fhirClient(listening.app, listening.db.database, { patientPutCreates: true });
  const theirs = (await owner.request('POST', '/fhir/Patient', { body: patientBody('CU-SITE') })).json();
  const mine = await other.request('PUT', '/fhir/Patient?identifier=CU-SITE', { body: patientBody('CU-SITE', { gender: 'other' }) });
  assert.equal(mine.statusCode, 201);
  assert.notEqual(mine.json().id, theirs.id);
  const untouched = (await owner.request('GET', `/fhir/Patient/${theirs.id}`)).json();
  assert.equal(untouched.meta.versionId, '1');
  assert.equal(untouched.gender, undefined);
  // _id of another site's resource matches nothing either; this site's Patient needs the policy to create, so 404.
  const strict = await fhirClient(listening.app, listening.db.database);
  const byId = await strict.request('PUT', `/fhir/Patient?_id=${theirs.id}`, { body: patientBody('CU-SITE') });
  assert.equal(byId.statusCode, 404);
  assert.equal((await owner.request('GET', `/fhir/Patient/${theirs.id}`)).json().meta.versionId, '1');
});

test('concurrent identical conditional updates on no match create exactly one resource (real sockets)', async () => {
  const client = await fhirClient(listening.app, listening.db.database);
  const patient = await patientOf(client, 'CU-RACE');
  // An Observation: nothing but the criteria lock keeps these apart (no unique index).
  const responses = await Promise.all(
    Array.from({ length: 30 }, (_, index) =>
      fetch(`${listening.url}/fhir/Observation?patient=${patient}&code=http://loinc.org|718-7`, {
        method: 'PUT',
        headers: { 'content-type': 'application/fhir+json', 'x-api-key': client.key },
        body: JSON.stringify(observation(patient, index)),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string } })),
    ),
  );
  const statuses = responses.map((response) => response.status);
  assert.equal(statuses.filter((status) => status === 201).length, 1, statuses.join(','));
  assert.equal(statuses.filter((status) => status === 200).length, 29, statuses.join(','));
  assert.equal(new Set(responses.map((response) => response.body.id)).size, 1);
  const search = (await client.request('GET', `/fhir/Observation?patient=${patient}`)).json();
  assert.equal(search.total, 1);
  assert.equal(search.entry[0].resource.meta.versionId, '30');
});

test('conditional update refuses bad criteria and bodies with a clear OperationOutcome', async () => {
  const client = await fhirClient(listening.app, listening.db.database, { patientPutCreates: true });
  const existing = (await client.request('POST', '/fhir/Patient', { body: patientBody('CU-BAD') })).json();
  const cases: [string, string, unknown, Record<string, string>, number, RegExp][] = [
    ['no criteria', '/fhir/Patient', patientBody('CU-BAD'), {}, 400, /no search criteria/],
    ['only a result parameter', '/fhir/Patient?_count=1', patientBody('CU-BAD'), {}, 400, /no search criteria/],
    ['an unsupported parameter', '/fhir/Patient?identifier=CU-BAD&favourite-colour=blue', patientBody('CU-BAD'), {}, 400, /favourite-colour/],
    ['an unsupported parameter, even under lenient handling', '/fhir/Patient?favourite-colour=blue', patientBody('CU-BAD'), { prefer: 'handling=lenient' }, 400, /favourite-colour/],
    ['a bad value', '/fhir/Patient?birthdate=yesterday', patientBody('CU-BAD'), {}, 400, /birthdate/],
    ['a body id that is not the match', '/fhir/Patient?identifier=CU-BAD', { ...patientBody('CU-BAD'), id: '00000000-0000-4000-8000-000000000001' }, {}, 400, /differs/],
    ['a body id and no match', '/fhir/Patient?identifier=CU-NONE', { ...patientBody('CU-NONE'), id: '00000000-0000-4000-8000-000000000001' }, {}, 400, /client's id/],
    ['a body id that is not a string', '/fhir/Patient?identifier=CU-BAD', { ...patientBody('CU-BAD'), id: 7 }, {}, 400, /string/],
    ['If-Match and no match', '/fhir/Patient?identifier=CU-NONE', patientBody('CU-NONE'), { 'if-match': 'W/"1"' }, 412, /no Patient matches/],
    ['another resource type in the body', '/fhir/Patient?identifier=CU-BAD', { resourceType: 'Observation' }, {}, 400, /not Patient/],
    ['an invalid resource', '/fhir/Patient?identifier=CU-BAD', patientBody('CU-BAD', { gender: 'sometimes' }), {}, 400, /gender/],
  ];
  for (const [what, url, body, headers, status, diagnostics] of cases) {
    const response = await client.request('PUT', url, { body, headers });
    assert.equal(response.statusCode, status, `${what}: ${response.body}`);
    assert.equal(response.json().resourceType, 'OperationOutcome', what);
    assert.match(JSON.stringify(response.json().issue), diagnostics, what);
  }
  const notJson = await client.request('PUT', '/fhir/Patient?identifier=CU-BAD', { body: 'x', headers: { 'content-type': 'text/plain' } });
  assert.equal(notJson.statusCode, 415);
  assert.equal((await client.request('PUT', `/fhir/DiagnosticReport?_id=${existing.id}`, { body: { resourceType: 'DiagnosticReport' } })).statusCode, 405);
  assert.equal((await client.request('GET', `/fhir/Patient/${existing.id}`)).json().meta.versionId, '1', 'nothing written');
  // A site whose policy does not let PUT create patients: no match is a 404, and nothing is made.
  const strict = await fhirClient(listening.app, listening.db.database);
  const refused = await strict.request('PUT', '/fhir/Patient?identifier=CU-POLICY', { body: patientBody('CU-POLICY') });
  assert.equal(refused.statusCode, 404);
  assert.equal((await strict.request('GET', '/fhir/Patient?identifier=CU-POLICY')).json().total, 0);
});

test('fhir-kit-client: a conditional update creates, then updates the same resource', async () => {
  const { key } = await fhirClient(listening.app, listening.db.database, { patientPutCreates: true });
  const client = new Client({ baseUrl: `${listening.url}/fhir`, customHeaders: { 'X-API-Key': key } });
  const first = (await client.update({ resourceType: 'Patient', searchParams: { identifier: 'urn:mrn|FK-CU' }, body: patientBody('FK-CU') as never })) as unknown as { id: string; meta: { versionId: string } };
  assert.equal(first.meta.versionId, '1');
  const second = (await client.update({
    resourceType: 'Patient',
    searchParams: { identifier: 'urn:mrn|FK-CU' },
    body: patientBody('FK-CU', { gender: 'female' }) as never,
  })) as unknown as { id: string; meta: { versionId: string }; gender: string };
  assert.equal(second.id, first.id);
  assert.equal(second.meta.versionId, '2');
  assert.equal(second.gender, 'female');
});
