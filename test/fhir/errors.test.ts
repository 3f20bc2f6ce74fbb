import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { Database } from '../../src/storage/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { useFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

interface Outcome {
  resourceType: string;
  issue: { severity: string; code: string; diagnostics?: string; expression?: string[] }[];
}

function outcome(response: { statusCode: number; headers: Record<string, unknown>; json(): unknown }, status: number): Outcome {
  assert.equal(response.statusCode, status);
  assert.match(String(response.headers['content-type']), /^application\/fhir\+json/);
  const body = response.json() as Outcome;
  assert.equal(body.resourceType, 'OperationOutcome');
  assert.ok(body.issue.length > 0);
  for (const issue of body.issue) {
    assert.ok(issue.severity && issue.code && issue.diagnostics, JSON.stringify(issue));
  }
  return body;
}

test('400: malformed JSON, a body that is not an object, a wrong resourceType', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  outcome(await client.request('POST', '/fhir/Patient', { body: '{"resourceType": "Patient",' }), 400);
  outcome(await client.request('POST', '/fhir/Patient', { body: '[1,2]' }), 400);
  outcome(await client.request('POST', '/fhir/Patient', { body: '"Patient"' }), 400);
  const wrong = outcome(await client.request('POST', '/fhir/Patient', { body: { resourceType: 'Observation' } }), 400);
  assert.deepEqual(wrong.issue[0]!.expression, ['resourceType']);
  outcome(await client.request('POST', '/fhir/Patient', { body: '' }), 400);
});

test('400, not 500, for hostile shapes: deep nesting, and a coding that is not an array', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const deep = `{"resourceType":"Patient","extension":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  const nested = outcome(await client.request('POST', '/fhir/Patient', { body: deep }), 400);
  assert.match(nested.issue[0]!.diagnostics ?? '', /nested more than 64 levels/);
  const notArray = { resourceType: 'Patient', identifier: [{ value: 'CODING-1' }], maritalStatus: { coding: { system: 'x', code: 'y' } } };
  outcome(await client.request('POST', '/fhir/Patient', { body: notArray }), 400);
  const condition = { resourceType: 'Condition', clinicalStatus: { coding: 'active' }, code: { text: 'x' }, subject: { reference: 'Patient/00000000-0000-4000-8000-000000000000' } };
  const response = await client.request('POST', '/fhir/Condition', { body: condition });
  assert.ok(response.statusCode === 400 || response.statusCode === 422, `status ${response.statusCode}`);
});

test('400, not 500, for a Bundle entry nested thousands deep', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const deepEntry = `{"resource":{"resourceType":"Patient","extension":${'['.repeat(100_000)}${']'.repeat(100_000)}},"request":{"method":"POST","url":"Patient"}}`;
  for (const type of ['transaction', 'batch']) {
    const body = `{"resourceType":"Bundle","type":"${type}","entry":[${deepEntry}]}`;
    const response = await client.request('POST', '/fhir', { body });
    assert.ok(response.statusCode === 400 || response.statusCode === 200, `${type}: ${response.statusCode} ${response.body.slice(0, 200)}`);
    assert.doesNotMatch(response.body, /Maximum call stack|RangeError/);
    if (response.statusCode === 200) assert.match(response.json().entry[0].response.status, /^400/);
  }
});

test('400, not 500, for a primitive extension that is not an object (the validator throws a plain error)', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  for (const extension of ['x', 5, ['x'], true]) {
    const body = { resourceType: 'Patient', identifier: [{ value: 'PRIMITIVE-EXT' }], birthDate: '1970-01-01', _birthDate: extension };
    const refused = outcome(await client.request('POST', '/fhir/Patient', { body }), 400);
    assert.equal(refused.issue[0]!.code, 'invalid');
  }
  const search = await client.request('GET', '/fhir/Patient?identifier=PRIMITIVE-EXT');
  assert.equal((search.json() as { total?: number }).total, 0);
});

test('400 with one issue per problem, each with its FHIRPath, for invalid bodies of every type', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('V-1') })).json();
  const subject = { reference: `Patient/${patient.id}` };
  const cases: { body: Record<string, unknown>; expressions: string[] }[] = [
    {
      body: { resourceType: 'Patient', gender: 'robot', birthDate: '31/12/1980', name: [{ given: 'Ann' }], colour: 'blue' },
      expressions: ['Patient.birthDate', 'Patient.colour', 'Patient.gender', 'Patient.name.given'],
    },
    { body: { resourceType: 'Patient', telecom: [{ system: 'telegraph', value: '1' }] }, expressions: ['Patient.telecom[0].system'] },
    {
      body: { resourceType: 'Patient', contained: [{ resourceType: 'Patient', id: 'p1', gender: 'x' }] },
      expressions: ['Patient.contained[0].gender'],
    },
    // Contained resources of the containable types are validated like stored ones; other types are refused by name.
    {
      body: { resourceType: 'Patient', contained: [{ resourceType: 'Organization', id: 'o1', name: 'Lab', active: 'yes' }] },
      expressions: ['Patient.contained[0].active'],
    },
    { body: { resourceType: 'Patient', contained: [{ resourceType: 'Questionnaire', id: 'q1', status: 'draft' }] }, expressions: ['Patient.contained[0]'] },
    {
      body: { resourceType: 'Condition', subject, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'gone' }] } },
      expressions: ['Condition.clinicalStatus'],
    },
    { body: { resourceType: 'Condition' }, expressions: ['Condition.subject'] },
    {
      body: {
        resourceType: 'AllergyIntolerance',
        patient: subject,
        clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] },
        criticality: 'extreme',
      },
      expressions: ['AllergyIntolerance.criticality'],
    },
    // Invariants of the StructureDefinition are checked too (ait-1: clinicalStatus required).
    { body: { resourceType: 'AllergyIntolerance', patient: subject }, expressions: ['AllergyIntolerance'] },
    { body: { resourceType: 'Observation', subject, code: { text: 'x' } }, expressions: ['Observation.status'] },
    { body: { resourceType: 'Observation', status: 'done', subject, code: { text: 'x' } }, expressions: ['Observation.status'] },
    { body: { resourceType: 'Procedure', status: 'finished', subject }, expressions: ['Procedure.status'] },
    { body: { resourceType: 'DocumentReference', status: 'current', subject }, expressions: ['DocumentReference.content'] },
    {
      body: { resourceType: 'DocumentReference', status: 'current', docStatus: 'signed', subject, content: [{ attachment: { contentType: 'text/plain' } }] },
      expressions: ['DocumentReference.docStatus'],
    },
  ];
  for (const { body, expressions } of cases) {
    const result = outcome(await client.request('POST', `/fhir/${body.resourceType}`, { body }), 400);
    const found = result.issue.flatMap((issue) => issue.expression ?? []).sort();
    assert.deepEqual(found, expressions, JSON.stringify(result));
    // The same body is refused on update too.
    const existing = await client.request('PUT', `/fhir/Patient/${patient.id}`, { body: { ...body, resourceType: 'Patient', id: patient.id } });
    if (body.resourceType === 'Patient') outcome(existing, 400);
  }
});

test('401 without a key or with a bad key; metadata needs none', async () => {
  const bare = await fhirOrigin.app.inject({ method: 'GET', url: '/fhir/Patient' });
  assert.equal(outcome(bare, 401).issue[0]!.code, 'login');
  outcome(await fhirOrigin.app.inject({ method: 'GET', url: '/fhir/Patient', headers: { 'x-api-key': 'cg_nope' } }), 401);
  assert.equal((await fhirOrigin.app.inject({ method: 'GET', url: '/fhir/metadata' })).statusCode, 200);
});

test('404 for unknown types and paths, 405 with Allow for other methods on known paths', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('N-1') })).json();
  outcome(await client.request('GET', '/fhir/Medication'), 404);
  outcome(await client.request('GET', '/fhir/Medication/1'), 404);
  outcome(await client.request('GET', '/v2/ingest'), 404);

  const cases: [string, string, string][] = [
    ['DELETE', `/fhir/Patient/${patient.id}`, 'GET, PUT, HEAD'],
    ['PATCH', `/fhir/Patient/${patient.id}`, 'GET, PUT, HEAD'],
    ['POST', `/fhir/Patient/${patient.id}`, 'GET, PUT, HEAD'],
    // PUT on the type is conditional update (http.html#cond-update).
    ['DELETE', '/fhir/Patient', 'GET, POST, PUT, HEAD'],
    ['PATCH', '/fhir/Observation', 'GET, POST, PUT, HEAD'],
    ['PUT', '/fhir/DiagnosticReport', 'GET, HEAD'],
    ['POST', '/fhir/DiagnosticReport', 'GET, HEAD'],
    ['PUT', '/fhir/DiagnosticReport/00000000-0000-4000-8000-000000000000', 'GET, HEAD'],
    ['DELETE', '/fhir/DiagnosticReport/00000000-0000-4000-8000-000000000000', 'GET, HEAD'],
    ['POST', '/fhir/metadata', 'GET, HEAD'],
    ['DELETE', `/fhir/Patient/${patient.id}/_history/1`, 'GET, HEAD'],
  ];
  for (const [method, url, allow] of cases) {
    const response = await client.request(method, url, { body: { resourceType: 'DiagnosticReport' } });
    outcome(response, 405);
    assert.equal(response.headers.allow, allow, `${method} ${url}`);
  }
  // Nothing was deleted.
  assert.equal((await client.request('GET', `/fhir/Patient/${patient.id}`)).statusCode, 200);
});

test('406 for an Accept or _format the server cannot produce; JSON forms are fine', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  outcome(await client.request('GET', '/fhir/Patient', { headers: { accept: 'application/fhir+xml' } }), 406);
  outcome(await client.request('GET', '/fhir/Patient?_format=xml'), 406);
  outcome(await client.request('GET', '/fhir/metadata?_format=text/html'), 406);
  for (const accept of ['application/fhir+json', 'application/json', '*/*', 'text/html, application/fhir+json;q=0.9', 'application/*']) {
    assert.equal((await client.request('GET', '/fhir/Patient', { headers: { accept } })).statusCode, 200, accept);
  }
  for (const format of ['json', 'application/fhir%2Bjson', 'application/fhir+json', 'application/json']) {
    assert.equal((await client.request('GET', `/fhir/Patient?_format=${format}`)).statusCode, 200, format);
  }
});

test('409 for a second active patient with one business identifier; 412 for a stale If-Match', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const first = (await client.request('POST', '/fhir/Patient', { body: patientBody('D-1') })).json();
  const duplicate = outcome(await client.request('POST', '/fhir/Patient', { body: patientBody('D-1') }), 409);
  assert.deepEqual(duplicate.issue[0]!.expression, ['Patient.identifier[0].value']);
  const second = (await client.request('POST', '/fhir/Patient', { body: patientBody('D-2') })).json();
  outcome(await client.request('PUT', `/fhir/Patient/${second.id}`, { body: { ...second, identifier: first.identifier } }), 409);
  await client.request('PUT', `/fhir/Patient/${first.id}`, { body: { ...first, gender: 'female' } });
  outcome(await client.request('PUT', `/fhir/Patient/${first.id}`, { body: first, headers: { 'if-match': 'W/"1"' } }), 412);
});

test('413 for an oversized body, 415 for a wrong Content-Type', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const huge = JSON.stringify(patientBody('B-1', { text: { status: 'generated', div: `<div>${'x'.repeat(5 * 1024 * 1024)}</div>` } }));
  outcome(await client.request('POST', '/fhir/Patient', { body: huge }), 413);
  outcome(await client.request('POST', '/fhir/Patient', { body: JSON.stringify(patientBody('B-2')), headers: { 'content-type': 'text/plain' } }), 415);
  outcome(await client.request('POST', '/fhir/Patient', { body: '<Patient/>', headers: { 'content-type': 'application/fhir+xml' } }), 415);
  const created = (await client.request('POST', '/fhir/Patient', { body: patientBody('B-3') })).json();
  outcome(await client.request('PUT', `/fhir/Patient/${created.id}`, { body: JSON.stringify(created), headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415);
  assert.equal((await client.request('GET', '/fhir/Patient?identifier=B-2')).json().total, 0);
});

test('503 OperationOutcome (retry later) when the database is unreachable', async () => {
  const unreachable = new Database({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
  const origin = await buildTestOrigin(fhirSurface, unreachable);
  try {
    const response = await origin.inject({ method: 'GET', url: '/fhir/Patient', headers: { 'x-api-key': `cg_0123456789ab_${'A'.repeat(43)}` } });
    const body = outcome(response, 503);
    assert.equal(body.issue[0]!.code, 'transient');
    assert.doesNotMatch(response.body, /ECONNREFUSED|at .*\.ts/);
  } finally {
    await origin.close();
    await unreachable.close();
  }
});
