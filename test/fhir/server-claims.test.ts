import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { useFhirOrigin, fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';
import { rawHttpExchange } from '../support/http.ts';

// Issue 19 point 8: what the server claims and links works.

const fhirOrigin = useFhirOrigin();

interface HistoryBundle {
  type: string;
  total: number;
  link: { relation: string; url: string }[];
  entry?: { resource: { meta: { versionId: string; lastUpdated: string } } }[];
}

function relative(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

function versions(bundle: HistoryBundle): string[] {
  return (bundle.entry ?? []).map((entry) => entry.resource.meta.versionId);
}

async function history(client: FhirClient, url: string, headers: Record<string, string> = {}): Promise<HistoryBundle> {
  const response = await client.request('GET', url, { headers });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json();
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 15));

/** A patient with three versions, and the instants between them. */
async function threeVersions(client: FhirClient) {
  const created = (await client.request('POST', '/fhir/Patient', { body: patientBody(`HV-${Math.random()}`) })).json();
  const url = `/fhir/Patient/${created.id}`;
  await pause();
  const afterFirst = new Date().toISOString();
  await pause();
  const second = (await client.request('PUT', url, { body: { ...created, gender: 'female' } })).json();
  await pause();
  const afterSecond = new Date().toISOString();
  await pause();
  await client.request('PUT', url, { body: { ...second, gender: 'male' } });
  return { url, afterFirst, afterSecond };
}

test('history: the self link is the history URL itself and answers the same bundle', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const { url } = await threeVersions(client);
  const bundle = await history(client, `${url}/_history?_count=2`);
  const self = bundle.link.find((link) => link.relation === 'self')!.url;
  assert.equal(relative(self), `${url}/_history?_count=2`);
  assert.deepEqual(versions(await history(client, relative(self))), versions(bundle));
  const next = bundle.link.find((link) => link.relation === 'next')!.url;
  const rest = await history(client, relative(next));
  assert.deepEqual(versions(rest), ['1']);
  assert.deepEqual(versions(await history(client, relative(rest.link.find((link) => link.relation === 'self')!.url))), ['1']);
});

test('history: _since keeps the versions stored at or after the instant; _at the versions current at that moment', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const { url, afterFirst, afterSecond } = await threeVersions(client);
  const since = await history(client, `${url}/_history?_since=${encodeURIComponent(afterFirst)}`);
  assert.deepEqual(versions(since), ['3', '2']);
  assert.equal(since.total, 2);
  assert.match(since.link.find((link) => link.relation === 'self')!.url, /_since=/);
  assert.deepEqual(versions(await history(client, `${url}/_history?_since=${encodeURIComponent(afterSecond)}`)), ['3']);
  assert.deepEqual(versions(await history(client, `${url}/_history?_since=2999-01-01`)), []);
  // Paging keeps the filter.
  const paged = await history(client, `${url}/_history?_since=${encodeURIComponent(afterFirst)}&_count=1`);
  assert.deepEqual(versions(paged), ['3']);
  assert.deepEqual(versions(await history(client, relative(paged.link.find((link) => link.relation === 'next')!.url))), ['2']);

  assert.deepEqual(versions(await history(client, `${url}/_history?_at=${encodeURIComponent(afterFirst)}`)), ['1']);
  assert.deepEqual(versions(await history(client, `${url}/_history?_at=${encodeURIComponent(afterSecond)}`)), ['2']);
  assert.deepEqual(versions(await history(client, `${url}/_history?_at=2999`)), ['3']);
  assert.deepEqual(versions(await history(client, `${url}/_history?_at=2001`)), []);
  // A whole day: version 1 was current at an instant of it.
  assert.ok(versions(await history(client, `${url}/_history?_at=${afterFirst.slice(0, 10)}`)).includes('1'));

  for (const query of ['_since=yesterday', '_since=2020-01-01T10:00', '_at=2020-13', '_count=x', '_since=2020&_since=2021']) {
    const response = await client.request('GET', `${url}/_history?${query}`);
    assert.equal(response.statusCode, 400, query);
    assert.equal(response.json().resourceType, 'OperationOutcome');
  }
});

test('history: an unknown parameter is refused naming it, or ignored and left out of the self link under lenient handling', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const { url } = await threeVersions(client);
  const refused = await client.request('GET', `${url}/_history?_list=x`);
  assert.equal(refused.statusCode, 400);
  assert.match(refused.json().issue[0].diagnostics, /_list is not a parameter of history; supported: _count, _since, _at, _format, _pretty/);
  const lenient = await history(client, `${url}/_history?_list=x&_count=5`, { prefer: 'handling=lenient' });
  assert.deepEqual(versions(lenient), ['3', '2', '1']);
  assert.equal(relative(lenient.link.find((link) => link.relation === 'self')!.url), `${url}/_history?_count=5`);
});

test('update: no updateCreate claim, and PUT to an unknown id never creates a resource at that id', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database, { patientPutCreates: true });
  const statement = (await client.request('GET', '/fhir/metadata')).json();
  for (const resource of statement.rest[0].resource) assert.equal(resource.updateCreate, false, resource.type);
  const newId = '00000000-0000-4000-8000-00000000abcd';
  const put = await client.request('PUT', `/fhir/Patient/${newId}`, { body: patientBody('UC-1', { id: newId }) });
  // http.html#update: 405 when the resource did not exist and client-defined ids are not allowed.
  assert.equal(put.statusCode, 405);
  assert.equal((await client.request('GET', `/fhir/Patient/${newId}`)).statusCode, 404);
});

test('update: a body without id is 400 for every type but Patient, which keeps the site policy rule', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('NI-1') })).json();
  const subject = { reference: `Patient/${patient.id}` };
  const bodies = [
    { resourceType: 'Condition', subject, code: { text: 'x' }, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] } },
    { resourceType: 'AllergyIntolerance', patient: subject, clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical', code: 'active' }] } },
    { resourceType: 'Observation', status: 'final', subject, code: { text: 'x' } },
    { resourceType: 'Procedure', status: 'completed', subject },
    { resourceType: 'DocumentReference', status: 'current', subject, content: [{ attachment: { contentType: 'text/plain', data: 'aGk=' } }] },
  ];
  for (const body of bodies) {
    const created = (await client.request('POST', `/fhir/${body.resourceType}`, { body })).json();
    const response = await client.request('PUT', `/fhir/${body.resourceType}/${created.id}`, { body });
    assert.equal(response.statusCode, 400, body.resourceType);
    assert.deepEqual(response.json().issue[0].expression, [`${body.resourceType}.id`]);
    const stored = (await client.request('GET', `/fhir/${body.resourceType}/${created.id}`)).json();
    assert.equal(stored.meta.versionId, '1', body.resourceType);
    assert.equal((await client.request('PUT', `/fhir/${body.resourceType}/${created.id}`, { body: { ...body, id: created.id } })).statusCode, 200);
  }
  const { id: _id, ...withoutId } = patient;
  assert.equal((await client.request('PUT', `/fhir/Patient/${patient.id}`, { body: withoutId })).statusCode, 200);
});

test('malformed URLs are answered with an OperationOutcome: bad percent-encoding in the path or the query, raw bytes', async () => {
  const client = await fhirClient(fhirOrigin.app, fhirOrigin.db.database);
  for (const url of ['/fhir/Patient/%ZZ', '/fhir/%E0%A4%A', '/fhir/Patient?name=%ZZ', '/fhir/Patient?name=%C3%28', '/fhir/Patient/x/_history?_since=%G1']) {
    const response = await client.request('GET', url);
    assert.equal(response.statusCode, 400, url);
    assert.match(String(response.headers['content-type']), /^application\/fhir\+json/, url);
    const outcome = response.json();
    assert.equal(outcome.resourceType, 'OperationOutcome', url);
    assert.match(outcome.issue[0].diagnostics, /percent-encod/, url);
    assert.ok(response.headers['x-request-id'], url);
  }
  const form = await client.request('POST', '/fhir/Patient/_search', { body: 'name=%ZZ', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(form.statusCode, 400);
  assert.equal(form.json().resourceType, 'OperationOutcome');

  // Raw UTF-8 bytes in the request target never reach a route: Node's parser refuses them.
  await fhirOrigin.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = fhirOrigin.app.server.address() as AddressInfo;
  const request = Buffer.concat([Buffer.from('GET /fhir/Patient?name=M'), Buffer.from('ü', 'utf8'), Buffer.from(`ller HTTP/1.1\r\nHost: x\r\nX-API-Key: ${client.key}\r\n\r\n`)]);
  const { head, body } = await rawHttpExchange(port, request);
  assert.match(head, /^HTTP\/1\.1 400 /);
  assert.match(head, /content-type: application\/fhir\+json/i);
  const outcome = JSON.parse(body);
  assert.equal(outcome.resourceType, 'OperationOutcome');
  assert.match(outcome.issue[0].diagnostics, /percent-encoded/);
});

test('401 answers carry a WWW-Authenticate challenge naming the X-API-Key header', async () => {
  for (const headers of [{}, { 'x-api-key': 'cg_nope' }]) {
    const response = await fhirOrigin.app.inject({ method: 'GET', url: '/fhir/Patient', headers });
    assert.equal(response.statusCode, 401);
    assert.equal(response.headers['www-authenticate'], 'ApiKey realm="clinical-gateway", header="X-API-Key"');
  }
});
