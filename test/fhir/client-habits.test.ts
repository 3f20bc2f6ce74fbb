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

test('a leap second (23:59:60, allowed by the dateTime pattern) in a clinical date is stored as sent and found on its own day', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await client.request('POST', '/fhir/Patient', { body: patientBody('LEAP-1') });
  assert.equal(patient.statusCode, 201, patient.body);
  const observation = {
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'leap' },
    subject: { reference: `Patient/${patient.json().id}` },
    effectiveDateTime: '2016-12-31T23:59:60Z',
  };
  const created = await client.request('POST', '/fhir/Observation', { body: observation });
  assert.equal(created.statusCode, 201, created.body);
  const read = await client.request('GET', `/fhir/Observation/${created.json().id}`);
  assert.equal(read.json().effectiveDateTime, '2016-12-31T23:59:60Z');
  for (const [query, found] of [['date=2016-12-31', true], ['date=2016-12-31T23:59:60Z', true], ['date=2017-01-01', false], ['date=lt2016-12-31T23:59:59Z', false]] as const) {
    const search = await client.request('GET', `/fhir/Observation?patient=${patient.json().id}&${query}`);
    assert.equal(search.statusCode, 200, `${query}: ${search.body}`);
    assert.equal((search.json().entry ?? []).length, found ? 1 : 0, query);
  }
});

test('a body with an empty array is a 400 naming each one, for create, update and a transaction entry, and nothing is stored', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await client.request('POST', '/fhir/Patient', { body: patientBody('EMPTY-ARRAY-1') });
  assert.equal(patient.statusCode, 201, patient.body);
  const id = patient.json().id as string;
  const observation = { resourceType: 'Observation', status: 'final', code: { text: 'x' }, subject: { reference: `Patient/${id}` }, note: [], component: [{ code: { text: 'c' }, referenceRange: [] }] };
  const created = await client.request('POST', '/fhir/Observation', { body: observation });
  assert.equal(created.statusCode, 400, created.body);
  const issues = created.json().issue as { code: string; expression: string[] }[];
  assert.deepEqual(issues.map((issue) => [issue.code, issue.expression[0]]), [['invalid', 'Observation.component[0].referenceRange'], ['invalid', 'Observation.note']]);
  const updated = await client.request('PUT', `/fhir/Patient/${id}`, { body: { ...patientBody('EMPTY-ARRAY-1'), id, name: [] } });
  assert.equal(updated.statusCode, 400, updated.body);
  assert.deepEqual(updated.json().issue[0].expression, ['Patient.name']);
  const transaction = await client.request('POST', '/fhir', {
    body: { resourceType: 'Bundle', type: 'transaction', entry: [{ resource: observation, request: { method: 'POST', url: 'Observation' } }] },
  });
  assert.equal(transaction.statusCode, 400, transaction.body);
  const searched = await client.request('GET', `/fhir/Observation?patient=${id}`);
  assert.equal(searched.json().total, 0);
  assert.equal((await client.request('GET', `/fhir/Patient/${id}`)).json().meta.versionId, '1');
});

test('PUT to an id that does not exist (a client-assigned id) is a 405 with Allow, as http.html#update says when updateCreate is false, alone and in a transaction', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = await client.request('POST', '/fhir/Patient', { body: patientBody('CLIENT-ID-1') });
  assert.equal(patient.statusCode, 201, patient.body);
  const observation = { resourceType: 'Observation', id: 'Lab.Result-1', status: 'final', code: { text: 'x' }, subject: { reference: `Patient/${patient.json().id}` } };
  const refused = await client.request('PUT', '/fhir/Observation/Lab.Result-1', { body: observation });
  assert.equal(refused.statusCode, 405, refused.body);
  assert.equal(refused.headers.allow, 'GET, HEAD');
  assert.equal(refused.json().issue[0].code, 'not-supported');
  assert.match(refused.json().issue[0].diagnostics, /updateCreate is false/);
  const transaction = await client.request('POST', '/fhir', {
    body: { resourceType: 'Bundle', type: 'transaction', entry: [{ resource: observation, request: { method: 'PUT', url: 'Observation/Lab.Result-1' } }] },
  });
  assert.equal(transaction.statusCode, 405, transaction.body);
  assert.match(transaction.json().issue[0].diagnostics, /^entry 0: /);
  assert.equal((await client.request('GET', '/fhir/Observation/Lab.Result-1')).statusCode, 404);
});

test('content negotiation: text/json is answered in JSON, fhirVersion 4.0 in Accept, _format or Content-Type is taken, another FHIR release is refused', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('VERSION-1'), headers: { 'content-type': 'application/fhir+json; fhirVersion=4.0' } });
  assert.equal(created.statusCode, 201, created.body);
  const url = `/fhir/Patient/${created.json().id}`;
  for (const accept of ['text/json', 'application/fhir+json; fhirVersion=4.0', 'application/fhir+json;fhirVersion=4.0.1', 'application/fhir+json; fhirVersion=3.0, application/json;q=0.5']) {
    const read = await client.request('GET', url, { headers: { accept } });
    assert.equal(read.statusCode, 200, `${accept}: ${read.body}`);
  }
  for (const format of ['application/fhir%2Bjson;fhirVersion=4.0', 'json;%20fhirVersion=4.0', 'application/fhir+json;%20fhirVersion=4.0']) {
    const read = await client.request('GET', `${url}?_format=${format}`);
    assert.equal(read.statusCode, 200, `_format=${format}: ${read.body}`);
  }
  for (const accept of ['application/fhir+json; fhirVersion=3.0', 'application/json; fhirVersion=1.0']) {
    const refused = await client.request('GET', url, { headers: { accept } });
    assert.equal(refused.statusCode, 406, `${accept}: ${refused.body}`);
    assert.equal(refused.json().issue[0].code, 'not-supported');
  }
  assert.equal((await client.request('GET', `${url}?_format=application/fhir%2Bjson;fhirVersion=3.0`)).statusCode, 406);
  const stu3 = await client.request('POST', '/fhir/Patient', { body: patientBody('VERSION-2'), headers: { 'content-type': 'application/fhir+json; fhirVersion=3.0' } });
  assert.equal(stu3.statusCode, 415, stu3.body);
  assert.equal((await client.request('GET', '/fhir/Patient?identifier=VERSION-2')).json().total, 0);
});

test('If-Match: * updates whatever the version, alone, in a conditional update and in a transaction; of an id that does not exist it is a 412', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database, { patientPutCreates: true });
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('STAR-1') });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  const updated = await client.request('PUT', `/fhir/Patient/${id}`, { body: { ...patientBody('STAR-1'), id, gender: 'male' }, headers: { 'if-match': '*' } });
  assert.equal(updated.statusCode, 200, updated.body);
  assert.equal(updated.json().meta.versionId, '2');
  const conditional = await client.request('PUT', '/fhir/Patient?identifier=STAR-1', { body: { ...patientBody('STAR-1'), gender: 'female' }, headers: { 'if-match': '*' } });
  assert.equal(conditional.statusCode, 200, conditional.body);
  assert.equal(conditional.json().meta.versionId, '3');
  const transaction = await client.request('POST', '/fhir', {
    body: { resourceType: 'Bundle', type: 'transaction', entry: [{ resource: { ...patientBody('STAR-1'), id }, request: { method: 'PUT', url: `Patient/${id}`, ifMatch: '*' } }] },
  });
  assert.equal(transaction.statusCode, 200, transaction.body);
  assert.equal(transaction.json().entry[0].response.etag, 'W/"4"');
  // Even where the site's policy lets PUT create patients, * asks for an existing one.
  const missing = await client.request('PUT', '/fhir/Patient/00000000-0000-4000-8000-00000000beef', { body: patientBody('STAR-2'), headers: { 'if-match': '*' } });
  assert.equal(missing.statusCode, 412, missing.body);
  assert.equal((await client.request('GET', '/fhir/Patient?identifier=STAR-2')).json().total, 0);
});

test('a body that is not UTF-8, or declared in another charset, is refused instead of stored with replacement characters', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  // "Zoë" in Latin-1: the ë is the single byte 0xEB, no UTF-8.
  const latin1 = Buffer.concat([Buffer.from('{"resourceType":"Patient","identifier":[{"value":"LATIN-1"}],"name":[{"family":"Zo'), Buffer.from([0xeb]), Buffer.from('"}]}')]);
  const notUtf8 = await fhirOrigin.app.inject({ method: 'POST', url: '/fhir/Patient', headers: { 'x-api-key': client.key, 'content-type': 'application/fhir+json' }, payload: latin1 });
  assert.equal(notUtf8.statusCode, 400, notUtf8.body);
  assert.equal(notUtf8.json().issue[0].code, 'invalid');
  assert.match(notUtf8.json().issue[0].diagnostics, /not UTF-8/);
  // Declared in another charset: refused even when its bytes happen to be ASCII.
  const ascii = JSON.stringify({ resourceType: 'Patient', identifier: [{ value: 'LATIN-1' }] });
  const declared = await fhirOrigin.app.inject({ method: 'POST', url: '/fhir/Patient', headers: { 'x-api-key': client.key, 'content-type': 'application/fhir+json; charset=ISO-8859-1' }, payload: ascii });
  assert.equal(declared.statusCode, 415, declared.body);
  assert.equal((await client.request('GET', '/fhir/Patient?identifier=LATIN-1')).json().total, 0);
  // UTF-8, declared or not, with or without a byte order mark, is taken.
  for (const [contentType, prefix, identifier] of [['application/fhir+json; charset=UTF-8', '', 'UTF8-1'], ['application/json', '\uFEFF', 'UTF8-2']] as const) {
    const body = `${prefix}${JSON.stringify({ resourceType: 'Patient', identifier: [{ value: identifier }], name: [{ family: 'Zoë 山田' }] })}`;
    const created = await fhirOrigin.app.inject({ method: 'POST', url: '/fhir/Patient', headers: { 'x-api-key': client.key, 'content-type': contentType }, payload: Buffer.from(body, 'utf8') });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.json().name[0].family, 'Zoë 山田');
  }
});
