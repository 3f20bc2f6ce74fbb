import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

// Requests as FHIR client libraries written elsewhere send them, and answers their parsers accept.

const fhirOrigin = useFhirOrigin();

test('a Bundle with no entries leaves entry out (json.html: no empty arrays), for search, _summary=count, history and $everything', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('EMPTY-1') });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  for (const url of [
    '/fhir/Patient?family=nobody-by-this-name',
    '/fhir/Patient?_summary=count',
    '/fhir/Patient?_count=0',
    '/fhir/Observation?patient=' + id,
    `/fhir/Patient/${id}/_history?_since=2999-01-01T00:00:00Z`,
    '/fhir/Patient/_history?_since=2999-01-01T00:00:00Z',
    '/fhir/_history?_since=2999-01-01T00:00:00Z',
    `/fhir/Patient/${id}/$everything?_type=Condition`,
  ]) {
    const response = await client.request('GET', url);
    assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    const bundle = response.json();
    assert.equal(bundle.resourceType, 'Bundle', url);
    assert.equal('entry' in bundle, false, `${url}: ${response.body}`);
  }
});
