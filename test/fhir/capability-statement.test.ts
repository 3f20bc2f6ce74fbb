import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

interface RestResource {
  type: string;
  interaction: { code: string }[];
  searchParam: { name: string; type: string }[];
}

const stored = ['Patient', 'Condition', 'AllergyIntolerance', 'Observation', 'Procedure', 'DocumentReference'];

test('GET /fhir/metadata: R4 4.0.1 instance statement with exactly the seven types and their interactions', async () => {
  const response = await fhirOrigin.app.inject({ method: 'GET', url: '/fhir/metadata' });
  assert.equal(response.statusCode, 200);
  assert.match(String(response.headers['content-type']), /^application\/fhir\+json/);
  const statement = response.json();
  assert.equal(statement.resourceType, 'CapabilityStatement');
  assert.equal(statement.fhirVersion, '4.0.1');
  assert.equal(statement.kind, 'instance');
  assert.deepEqual(statement.format, ['json']);
  assert.equal(statement.rest[0].mode, 'server');
  assert.match(statement.rest[0].security.description, /X-API-Key/);
  const resources: RestResource[] = statement.rest[0].resource;
  assert.deepEqual(resources.map((resource) => resource.type).sort(), [...stored, 'DiagnosticReport'].sort());
  for (const resource of resources) {
    const codes = resource.interaction.map((interaction) => interaction.code).sort();
    assert.deepEqual(
      codes,
      resource.type === 'DiagnosticReport' ? ['read', 'search-type', 'vread'] : ['create', 'history-instance', 'history-type', 'read', 'search-type', 'update', 'vread'],
      resource.type,
    );
  }
  // The result parameters that choose order and content are claimed as special parameters (checked by the walk).
  const params = (type: string) =>
    Object.fromEntries(resources.find((resource) => resource.type === type)!.searchParam.filter((p) => p.type !== 'special').map((p) => [p.name, p.type]));
  assert.deepEqual(params('Patient'), { _id: 'token', _lastUpdated: 'date', identifier: 'token', name: 'string', family: 'string', given: 'string', birthdate: 'date', gender: 'token' });
  assert.deepEqual(params('Condition'), { _id: 'token', _lastUpdated: 'date', patient: 'reference', subject: 'reference', 'clinical-status': 'token', code: 'token', 'onset-date': 'date' });
  assert.deepEqual(params('AllergyIntolerance'), { _id: 'token', _lastUpdated: 'date', patient: 'reference', 'clinical-status': 'token', code: 'token', date: 'date' });
  assert.deepEqual(params('Observation'), { _id: 'token', _lastUpdated: 'date', patient: 'reference', subject: 'reference', code: 'token', category: 'token', status: 'token', date: 'date' });
  assert.deepEqual(params('Procedure'), { _id: 'token', _lastUpdated: 'date', patient: 'reference', subject: 'reference', code: 'token', date: 'date' });
  assert.deepEqual(params('DocumentReference'), { _id: 'token', _lastUpdated: 'date', patient: 'reference', subject: 'reference', type: 'token', date: 'date' });
  assert.deepEqual(params('DiagnosticReport'), { _id: 'token', patient: 'reference', status: 'token' });
});

test('the statement and the server agree: every declared parameter is accepted under strict handling, every interaction answers', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const statement = (await client.request('GET', '/fhir/metadata')).json();
  const sample: Record<string, string> = { token: 'x', reference: 'Patient/00000000-0000-4000-8000-000000000000', string: 'x', date: '2000' };
  const specialSample: Record<string, string> = { _sort: '-_lastUpdated', _summary: 'true', _elements: 'id' };
  for (const resource of statement.rest[0].resource as RestResource[]) {
    for (const parameter of resource.searchParam) {
      const response = await client.request('GET', `/fhir/${resource.type}?${parameter.name}=${encodeURIComponent((parameter.type === 'special' ? specialSample[parameter.name] : sample[parameter.type])!)}`, {
        headers: { prefer: 'handling=strict' },
      });
      assert.equal(response.statusCode, 200, `${resource.type}?${parameter.name}: ${response.body}`);
    }
    const codes = new Set(resource.interaction.map((interaction) => interaction.code));
    const missing = '00000000-0000-4000-8000-000000000000';
    // Declared interactions reach a handler (404 for the unknown id), the others are 405.
    assert.equal((await client.request('GET', `/fhir/${resource.type}/${missing}`)).statusCode, 404);
    assert.equal((await client.request('POST', `/fhir/${resource.type}`, { body: { resourceType: resource.type } })).statusCode === 405, !codes.has('create'));
    // An update of an unknown id is a 405 too (updateCreate is false), but from the handler.
    const put = await client.request('PUT', `/fhir/${resource.type}/${missing}`, { body: { resourceType: resource.type, id: missing } });
    assert.equal(put.statusCode === 405 && !put.json().issue[0].diagnostics.includes('updateCreate is false'), !codes.has('update'), put.body);
    // Without history-instance the _history path does not exist for the type: 404 either way,
    // but only a type that declares it reaches the history handler (whose 404 names the resource).
    const history = await client.request('GET', `/fhir/${resource.type}/${missing}/_history`);
    assert.equal(history.statusCode, 404);
    assert.equal(history.json().issue[0].diagnostics.includes(`${resource.type}/${missing} is not known`), codes.has('history-instance'));
  }
});

test('the origin documents its FHIR routes in OpenAPI', async () => {
  const response = await fhirOrigin.app.inject({ method: 'GET', url: '/api/documentation/openapi.json' });
  assert.equal(response.statusCode, 200);
  const paths = Object.keys(response.json().paths);
  for (const path of ['/fhir/metadata', '/fhir/Patient', '/fhir/Patient/{id}', '/fhir/Patient/{id}/_history', '/fhir/DiagnosticReport/{id}']) {
    assert.ok(paths.includes(path), path);
  }
  assert.ok(!paths.some((path) => path.startsWith('/v2') || path.startsWith('/ingest')));
});
