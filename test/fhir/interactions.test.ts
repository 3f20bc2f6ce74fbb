import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

const fhirOrigin = useFhirOrigin();

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('create: 201 with Location, ETag, a service id (client id ignored), versionId and lastUpdated', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const response = await client.request('POST', '/fhir/Patient', { body: { ...patientBody('C-1'), id: 'mine' } });
  assert.equal(response.statusCode, 201);
  const created = response.json();
  assert.match(created.id, uuid);
  assert.equal(created.meta.versionId, '1');
  assert.ok(created.meta.lastUpdated);
  assert.equal(response.headers.etag, 'W/"1"');
  assert.match(String(response.headers.location), new RegExp(`/fhir/Patient/${created.id}/_history/1$`));
  assert.match(String(response.headers['content-type']), /^application\/fhir\+json/);
  // application/json is accepted as well.
  const plain = await client.request('POST', '/fhir/Patient', {
    body: patientBody('C-1b'),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(plain.statusCode, 201);
  const withVersion = await client.request('POST', '/fhir/Patient', {
    body: patientBody('C-1c'),
    headers: { 'content-type': 'application/fhir+json; fhirVersion=4.0; charset=utf-8' },
  });
  assert.equal(withVersion.statusCode, 201);
});

test('a reference to this server written absolute, as a search\'s fullUrl gives it, is stored relative; one to another server is refused', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('ABS-1') })).json();
  // The base the service gives this client in every fullUrl, read back from a search.
  const found = (await client.request('GET', `/fhir/Patient?_id=${patient.id}`)).json();
  const fullUrl = found.entry[0].fullUrl as string;
  assert.match(fullUrl, new RegExp(`^https?://.+/fhir/Patient/${patient.id}$`));
  const observation = { resourceType: 'Observation', status: 'final', code: { text: 'Hb' }, subject: { reference: fullUrl } };
  const created = await client.request('POST', '/fhir/Observation', { body: observation });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().subject.reference, `Patient/${patient.id}`);
  const listed = (await client.request('GET', `/fhir/Observation?patient=${patient.id}`)).json();
  assert.deepEqual(listed.entry.map((entry: { resource: { id: string } }) => entry.resource.id), [created.json().id]);
  const updated = await client.request('PUT', `/fhir/Observation/${created.json().id}`, { body: { ...observation, id: created.json().id, status: 'amended' } });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(updated.json().subject.reference, `Patient/${patient.id}`);
  const elsewhere = await client.request('POST', '/fhir/Observation', { body: { ...observation, subject: { reference: `http://other.example/fhir/Patient/${patient.id}` } } });
  assert.equal(elsewhere.statusCode, 400, elsewhere.body);
});

test('read: 200 with ETag; unknown and syntactically invalid ids are 404 OperationOutcomes', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const created = (await client.request('POST', '/fhir/Patient', { body: patientBody('R-1') })).json();
  const read = await client.request('GET', `/fhir/Patient/${created.id}`);
  assert.equal(read.statusCode, 200);
  assert.equal(read.headers.etag, 'W/"1"');
  assert.deepEqual(read.json(), created);
  assert.equal(Object.keys(read.json())[0], 'resourceType');
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', "1'%20OR%201=1"]) {
    const missing = await client.request('GET', `/fhir/Patient/${id}`);
    assert.equal(missing.statusCode, 404, id);
    assert.equal(missing.json().resourceType, 'OperationOutcome');
    assert.equal(missing.json().issue[0].code, 'not-found');
  }
});

test('update: new version per PUT, id rules, If-Match, vread and history', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const created = (await client.request('POST', '/fhir/Patient', { body: patientBody('U-1') })).json();
  const url = `/fhir/Patient/${created.id}`;

  const updated = await client.request('PUT', url, { body: { ...created, gender: 'female' }, headers: { 'if-match': 'W/"1"' } });
  assert.equal(updated.statusCode, 200);
  assert.equal(updated.json().meta.versionId, '2');
  assert.equal(updated.headers.etag, 'W/"2"');

  // A body without id updates the resource of the path.
  const { id: _id, ...withoutId } = created;
  const third = await client.request('PUT', url, { body: { ...withoutId, gender: 'male' } });
  assert.equal(third.json().meta.versionId, '3');

  const stale = await client.request('PUT', url, { body: { ...created, gender: 'other' }, headers: { 'if-match': 'W/"1"' } });
  assert.equal(stale.statusCode, 412);
  assert.equal(stale.json().resourceType, 'OperationOutcome');

  const badIfMatch = await client.request('PUT', url, { body: created, headers: { 'if-match': 'three' } });
  assert.equal(badIfMatch.statusCode, 400);

  const otherId = await client.request('PUT', url, { body: { ...created, id: '00000000-0000-4000-8000-000000000000' } });
  assert.equal(otherId.statusCode, 400);
  assert.deepEqual(otherId.json().issue[0].expression, ['Patient.id']);

  const missing = await client.request('PUT', '/fhir/Patient/00000000-0000-4000-8000-000000000000', {
    body: { ...withoutId, id: '00000000-0000-4000-8000-000000000000' },
  });
  assert.equal(missing.statusCode, 405);

  const wrongType = await client.request('PUT', url, { body: { ...created, resourceType: 'Observation' } });
  assert.equal(wrongType.statusCode, 400);

  const v1 = await client.request('GET', `${url}/_history/1`);
  assert.equal(v1.statusCode, 200);
  assert.equal(v1.json().gender, undefined);
  assert.equal(v1.headers.etag, 'W/"1"');
  assert.equal((await client.request('GET', `${url}/_history/9`)).statusCode, 404);
  assert.equal((await client.request('GET', `${url}/_history/x`)).statusCode, 404);

  const history = await client.request('GET', `${url}/_history`);
  assert.equal(history.statusCode, 200);
  const bundle = history.json();
  assert.equal(bundle.type, 'history');
  assert.equal(bundle.total, 3);
  assert.deepEqual(bundle.entry.map((entry: { resource: { meta: { versionId: string } } }) => entry.resource.meta.versionId), ['3', '2', '1']);
  const paged = (await client.request('GET', `${url}/_history?_count=2`)).json();
  assert.equal(paged.entry.length, 2);
  const next = paged.link.find((link: { relation: string }) => link.relation === 'next').url;
  const rest = (await client.request('GET', new URL(next).pathname + new URL(next).search)).json();
  assert.deepEqual(rest.entry.map((entry: { resource: { meta: { versionId: string } } }) => entry.resource.meta.versionId), ['1']);
});

test('PUT of a Patient without id to an unknown id creates one only when the site policy permits', async () => {
  const strict = await fhirClient(fhirOrigin.app, fhirOrigin.db.database, { patientPutCreates: false });
  const permissive = await fhirClient(fhirOrigin.app, fhirOrigin.db.database, { patientPutCreates: true });
  const url = '/fhir/Patient/00000000-0000-4000-8000-0000000000aa';
  assert.equal((await strict.request('PUT', url, { body: patientBody('P-1') })).statusCode, 405);
  const created = await permissive.request('PUT', url, { body: patientBody('P-1') });
  assert.equal(created.statusCode, 201);
  assert.match(created.json().id, uuid);
  assert.notEqual(created.json().id, '00000000-0000-4000-8000-0000000000aa');
  assert.ok(created.headers.location);
  // Other types never create on PUT: a body without id is refused (http.html#update), one with
  // the id of the URL finds nothing to update (405: updateCreate is false).
  const observationUrl = '/fhir/Observation/00000000-0000-4000-8000-0000000000aa';
  const observation = { resourceType: 'Observation', status: 'final', code: { text: 'x' } };
  assert.equal((await permissive.request('PUT', observationUrl, { body: observation })).statusCode, 400);
  assert.equal((await permissive.request('PUT', observationUrl, { body: { ...observation, id: '00000000-0000-4000-8000-0000000000aa' } })).statusCode, 405);
});

test('Prefer: return=minimal and return=OperationOutcome', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const minimal = await client.request('POST', '/fhir/Patient', { body: patientBody('M-1'), headers: { prefer: 'return=minimal' } });
  assert.equal(minimal.statusCode, 201);
  assert.equal(minimal.body, '');
  assert.equal(minimal.headers['content-type'], undefined, 'no body, so no Content-Type');
  assert.ok(minimal.headers.location);
  const id = (minimal.headers.location as string).split('/')[5]!;
  const updated = await client.request('PUT', `/fhir/Patient/${id}`, { body: { ...patientBody('M-1'), id, gender: 'female' }, headers: { prefer: 'return=minimal' } });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(updated.body, '');
  assert.equal(updated.headers['content-type'], undefined);
  assert.equal(updated.headers.etag, 'W/"2"');
  const outcome = await client.request('POST', '/fhir/Patient', { body: patientBody('M-2'), headers: { prefer: 'return=OperationOutcome' } });
  assert.equal(outcome.statusCode, 201);
  assert.equal(outcome.json().resourceType, 'OperationOutcome');
});

test('every writable type: create, read, update; references must be patients of the site', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('T-1') })).json();
  const subject = { reference: `Patient/${patient.id}` };
  const bodies = [
    {
      resourceType: 'Condition',
      subject,
      clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] },
      code: { coding: [{ system: 'http://snomed.info/sct', code: '38341003' }] },
    },
    {
      resourceType: 'AllergyIntolerance',
      patient: subject,
      clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] },
      code: { coding: [{ system: 'http://snomed.info/sct', code: '91936005' }] },
    },
    { resourceType: 'Observation', status: 'final', subject, code: { coding: [{ system: 'http://loinc.org', code: '718-7' }] } },
    { resourceType: 'Procedure', status: 'completed', subject, code: { coding: [{ system: 'http://snomed.info/sct', code: '80146002' }] } },
    {
      resourceType: 'DocumentReference',
      status: 'current',
      subject,
      type: { coding: [{ system: 'http://loinc.org', code: '34133-9' }] },
      content: [{ attachment: { contentType: 'text/plain', data: 'aGVsbG8=' } }],
    },
  ];
  for (const body of bodies) {
    const created = await client.request('POST', `/fhir/${body.resourceType}`, { body });
    assert.equal(created.statusCode, 201, `${body.resourceType}: ${created.body}`);
    const resource = created.json();
    assert.equal((await client.request('GET', `/fhir/${body.resourceType}/${resource.id}`)).statusCode, 200);
    const updated = await client.request('PUT', `/fhir/${body.resourceType}/${resource.id}`, { body: resource });
    assert.equal(updated.statusCode, 200);
    assert.equal(updated.json().meta.versionId, '2');

    const element = body.resourceType === 'AllergyIntolerance' ? 'patient' : 'subject';
    const dangling = await client.request('POST', `/fhir/${body.resourceType}`, {
      body: { ...body, [element]: { reference: 'Patient/00000000-0000-4000-8000-000000000000' } },
    });
    assert.equal(dangling.statusCode, 422, body.resourceType);
    assert.equal(dangling.json().issue[0].code, 'business-rule');
    assert.deepEqual(dangling.json().issue[0].expression, [`${body.resourceType}.${element}.reference`]);
  }
});
