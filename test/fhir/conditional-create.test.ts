import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fhirClient, patientBody, useListeningFhirOrigin } from './fhir-test-origin.ts';

const listening = useListeningFhirOrigin();

test('50 parallel conditional creates with the same criteria make exactly one resource (real sockets)', async () => {
  const client = await fhirClient(listening.app, listening.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('CC-1') })).json();
  // An Observation: nothing but the conditional-create lock keeps these apart (no unique index).
  const body = JSON.stringify({
    resourceType: 'Observation',
    status: 'final',
    identifier: [{ system: 'urn:lab', value: 'ORDER-42' }],
    code: { coding: [{ system: 'http://loinc.org', code: '718-7' }] },
    subject: { reference: `Patient/${patient.id}` },
  });
  const responses = await Promise.all(
    Array.from({ length: 50 }, () =>
      fetch(`${listening.url}/fhir/Observation`, {
        method: 'POST',
        headers: { 'content-type': 'application/fhir+json', 'x-api-key': client.key, 'if-none-exist': `patient=${patient.id}&code=http://loinc.org|718-7` },
        body,
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string } })),
    ),
  );
  const statuses = responses.map((response) => response.status);
  assert.equal(statuses.filter((status) => status === 201).length, 1, statuses.join(','));
  assert.equal(statuses.filter((status) => status === 200).length, 49);
  assert.equal(new Set(responses.map((response) => response.body.id)).size, 1);
  const search = (await client.request('GET', `/fhir/Observation?patient=${patient.id}`)).json();
  assert.equal(search.total, 1);
});

test('conditional create: one match returns it (200), several are a 412, criteria must be known', async () => {
  const client = await fhirClient(listening.app, listening.db.database);
  const first = (await client.request('POST', '/fhir/Patient', { body: patientBody('CC-2', { gender: 'male' }) })).json();
  const again = await client.request('POST', '/fhir/Patient', { body: patientBody('CC-2'), headers: { 'if-none-exist': 'identifier=urn:mrn|CC-2' } });
  assert.equal(again.statusCode, 200);
  assert.equal(again.json().id, first.id);
  await client.request('POST', '/fhir/Patient', { body: patientBody('CC-3', { gender: 'male' }) });
  const ambiguous = await client.request('POST', '/fhir/Patient', { body: patientBody('CC-4'), headers: { 'if-none-exist': 'gender=male' } });
  assert.equal(ambiguous.statusCode, 412);
  assert.equal(ambiguous.json().resourceType, 'OperationOutcome');
  const unknown = await client.request('POST', '/fhir/Patient', { body: patientBody('CC-5'), headers: { 'if-none-exist': 'favourite-colour=blue' } });
  assert.equal(unknown.statusCode, 400);
  const empty = await client.request('POST', '/fhir/Patient', { body: patientBody('CC-6'), headers: { 'if-none-exist': '' } });
  assert.equal(empty.statusCode, 400);
  const nul = await client.request('POST', '/fhir/Patient', { body: patientBody('CC-7'), headers: { 'if-none-exist': 'identifier=%00' } });
  assert.equal(nul.statusCode, 400);
  // The full-URL form of the header works too.
  const urlForm = await client.request('POST', '/fhir/Patient', {
    body: patientBody('CC-2'),
    headers: { 'if-none-exist': 'Patient?identifier=CC-2' },
  });
  assert.equal(urlForm.statusCode, 200);
  assert.equal(urlForm.json().id, first.id);
});
