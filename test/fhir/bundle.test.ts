// Issue 22 point 1: batch and transaction Bundles at POST /fhir (http.html#transaction).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Client } from 'fhir-kit-client';
import { dataAccessRecorder } from '../../src/domain/audit/data-access.ts';
import { listDataAccess } from '../../src/domain/audit/data-access-log.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { fhirClient, patientBody, type FhirClient } from './fhir-test-origin.ts';

const maxEntries = 50;
const maxBytes = 256 * 1024;
let db: TestDatabase;
let app: FastifyInstance;
let url: string;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(fhirSurface, db.database, { CG_FHIR_BUNDLE_MAX_ENTRIES: String(maxEntries), CG_FHIR_BUNDLE_MAX_SIZE: String(maxBytes) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
after(async () => {
  await app.close();
  await db.drop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const observation = (subject: string, extra: Json = {}) => ({
  resourceType: 'Observation',
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '718-7' }] },
  subject: { reference: subject },
  valueQuantity: { value: 13.2, unit: 'g/dL' },
  ...extra,
});

const bundle = (type: string, entry: unknown[]) => ({ resourceType: 'Bundle', type, entry });

async function count(client: FhirClient, query: string): Promise<number> {
  return (await client.request('GET', `/fhir/${query}${query.includes('?') ? '&' : '?'}_summary=count`)).json().total;
}

/** A transaction that creates a patient (conditionally) and observations about it through urn:uuid. */
function patientWithObservations(mrn: string, observations: number): Json {
  const patientUrl = `urn:uuid:${randomUUID()}`;
  return bundle('transaction', [
    ...Array.from({ length: observations }, (_, i) => ({
      fullUrl: `urn:uuid:${randomUUID()}`,
      resource: observation(patientUrl, { valueQuantity: { value: i, unit: 'g/dL' } }),
      request: { method: 'POST', url: 'Observation' },
    })),
    { fullUrl: patientUrl, resource: patientBody(mrn), request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=urn:mrn|${mrn}` } },
  ]);
}

test('a transaction creates, rewrites urn:uuid references (also to resources later in the Bundle) and answers each entry', async () => {
  const client = await fhirClient(app, db.database);
  const sent = patientWithObservations('TX-1', 2);
  const response = await client.request('POST', '/fhir', { body: sent });
  assert.equal(response.statusCode, 200, response.body);
  const answer = response.json();
  assert.equal(answer.type, 'transaction-response');
  assert.equal(answer.entry.length, 3);
  const patient = answer.entry[2];
  assert.equal(patient.response.status, '201 Created');
  assert.match(patient.response.location, /^Patient\/[0-9a-f-]{36}\/_history\/1$/);
  assert.equal(patient.response.etag, 'W/"1"');
  assert.ok(patient.response.lastModified);
  for (const entry of answer.entry.slice(0, 2)) {
    assert.equal(entry.response.status, '201 Created');
    assert.equal(entry.resource.subject.reference, `Patient/${patient.resource.id}`);
    const stored = (await client.request('GET', `/fhir/Observation/${entry.resource.id}`)).json();
    assert.equal(stored.subject.reference, `Patient/${patient.resource.id}`);
  }
  // The same transaction again: the patient exists (200), new observations point to it.
  const again = (await client.request('POST', '/fhir', { body: patientWithObservations('TX-1', 1) })).json();
  assert.equal(again.entry[1].response.status, '200 OK');
  assert.equal(again.entry[1].resource.id, patient.resource.id);
  assert.equal(again.entry[0].resource.subject.reference, `Patient/${patient.resource.id}`);
  assert.equal(await count(client, 'Patient'), 1);
  assert.equal(await count(client, `Observation?patient=${patient.resource.id}`), 3);
});

test('a transaction updates, conditionally updates, resolves conditional references and reads after its writes; Prefer return applies to every entry', async () => {
  const client = await fhirClient(app, db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('TX-2') })).json();
  const lab = (code: string) => ({ code: { coding: [{ system: 'urn:lab', code }] } });
  const existing = (await client.request('POST', '/fhir/Observation', { body: observation(`Patient/${patient.id}`, lab('L-1')) })).json();
  const newUrl = `urn:oid:1.2.3.${Date.now()}`;
  const response = await client.request('POST', '/fhir', {
    headers: { prefer: 'return=minimal' },
    body: bundle('transaction', [
      { request: { method: 'GET', url: `Observation?patient=${patient.id}` } },
      { resource: { ...patient, gender: 'female' }, request: { method: 'PUT', url: `Patient/${patient.id}`, ifMatch: 'W/"1"' } },
      { resource: observation('Patient?identifier=urn:mrn|TX-2', { status: 'amended', ...lab('L-1') }), request: { method: 'PUT', url: `Observation?patient=${patient.id}&code=urn:lab|L-1` } },
      { fullUrl: newUrl, resource: observation(`Patient/${patient.id}`, lab('L-2')), request: { method: 'PUT', url: `Observation?patient=${patient.id}&code=urn:lab|L-2` } },
      { resource: { resourceType: 'Condition', subject: { reference: `Patient/${patient.id}` }, code: { text: 'x' }, evidence: [{ detail: [{ reference: newUrl }] }] }, request: { method: 'POST', url: 'Condition' } },
      { request: { method: 'GET', url: `Patient/${patient.id}` } },
    ]),
  });
  assert.equal(response.statusCode, 200, response.body);
  const entries = response.json().entry;
  assert.deepEqual(entries.map((entry: Json) => entry.response.status), ['200 OK', '200 OK', '200 OK', '201 Created', '201 Created', '200 OK']);
  assert.equal(entries[0].resource.total, 2, 'the search ran after the writes (return=minimal is for writes)');
  assert.equal(entries[5].resource.gender, 'female', 'the read ran after the writes');
  assert.equal(entries[1].resource, undefined, 'return=minimal');
  assert.equal(entries[2].response.location, `Observation/${existing.id}/_history/2`);
  const conditionId = /^Condition\/([^/]+)/.exec(entries[4].response.location)![1];
  const condition = (await client.request('GET', `/fhir/Condition/${conditionId}`)).json();
  assert.equal(condition.evidence[0].detail[0].reference, entries[3].response.location.replace(/\/_history\/1$/, ''), 'urn:oid resolved');
  const amended = (await client.request('GET', `/fhir/Observation/${existing.id}`)).json();
  assert.equal(amended.status, 'amended');
  assert.equal(amended.subject.reference, `Patient/${patient.id}`, 'the conditional reference was resolved');

  const twice = await client.request('POST', '/fhir', {
    body: bundle('transaction', [
      { resource: { ...patient, gender: 'male' }, request: { method: 'PUT', url: `Patient/${patient.id}` } },
      { resource: patientBody('TX-2', { gender: 'other' }), request: { method: 'PUT', url: 'Patient?identifier=urn:mrn|TX-2' } },
    ]),
  });
  assert.equal(twice.statusCode, 400, twice.body);
  assert.match(twice.json().issue[0].diagnostics, /^entry 1: it names Patient\/.* as entry 0 does/);
  assert.equal((await client.request('GET', `/fhir/Patient/${patient.id}`)).json().gender, 'female', 'neither was written');

  const outcome = (await client.request('POST', '/fhir', { headers: { prefer: 'return=OperationOutcome' }, body: bundle('transaction', [{ resource: patientBody('TX-2b'), request: { method: 'POST', url: 'Patient' } }]) })).json();
  assert.equal(outcome.entry[0].response.outcome.resourceType, 'OperationOutcome');
  assert.equal(outcome.entry[0].resource, undefined);
});

test('a transaction is all or nothing: a failing entry names its index and fullUrl, and nothing of the others stays', async () => {
  const client = await fhirClient(app, db.database);
  const patientUrl = `urn:uuid:${randomUUID()}`;
  const response = await client.request('POST', '/fhir', {
    body: bundle('transaction', [
      { fullUrl: patientUrl, resource: patientBody('TX-3'), request: { method: 'POST', url: 'Patient' } },
      { fullUrl: 'urn:uuid:bad-one', resource: observation(patientUrl, { status: 'not-a-status' }), request: { method: 'POST', url: 'Observation' } },
    ]),
  });
  assert.equal(response.statusCode, 400, response.body);
  const outcome = response.json();
  assert.equal(outcome.resourceType, 'OperationOutcome');
  assert.match(outcome.issue[0].diagnostics, /^entry 1 \(urn:uuid:bad-one\): /);
  assert.deepEqual(outcome.issue[0].expression, ['Bundle.entry[1]']);
  assert.equal(await count(client, 'Patient'), 0, 'the patient was not kept');
});

test('another site\'s ids behave as ids that do not exist: 404 (405 for an update) in a batch, a failed transaction, a reference refused', async () => {
  const other = await fhirClient(app, db.database);
  const theirs = (await other.request('POST', '/fhir/Patient', { body: patientBody('OTHER-1') })).json();
  const client = await fhirClient(app, db.database);
  const batch = (await client.request('POST', '/fhir', {
    body: bundle('batch', [
      { request: { method: 'GET', url: `Patient/${theirs.id}` } },
      { resource: { ...theirs }, request: { method: 'PUT', url: `Patient/${theirs.id}` } },
      { resource: observation(`Patient/${theirs.id}`), request: { method: 'POST', url: 'Observation' } },
    ]),
  })).json();
  assert.deepEqual(batch.entry.map((entry: Json) => entry.response.status.slice(0, 3)), ['404', '405', '422']);
  const read = await client.request('POST', '/fhir', { body: bundle('transaction', [{ request: { method: 'GET', url: `Patient/${theirs.id}` } }]) });
  assert.equal(read.json().entry[0].response.status, '404 Not Found', 'a read of a transaction is answered in its entry');
  for (const entry of [
    { resource: { ...theirs, gender: 'male' }, request: { method: 'PUT', url: `Patient/${theirs.id}` } },
    { resource: observation(`Patient/${theirs.id}`), request: { method: 'POST', url: 'Observation' } },
    { resource: observation('Patient?identifier=urn:mrn|OTHER-1'), request: { method: 'POST', url: 'Observation' } },
  ]) {
    const failed = await client.request('POST', '/fhir', { body: bundle('transaction', [entry]) });
    assert.ok([405, 412, 422].includes(failed.statusCode), `${failed.statusCode} ${failed.body}`);
    assert.match(failed.json().issue[0].diagnostics, /^entry 0: /);
  }
  assert.equal((await other.request('GET', `/fhir/Patient/${theirs.id}`)).json().meta.versionId, '1');
  assert.equal(await count(client, 'Observation'), 0);
});

test('a batch answers each entry on its own, in its entry', async () => {
  const client = await fhirClient(app, db.database);
  const response = await client.request('POST', '/fhir', {
    body: bundle('batch', [
      { resource: patientBody('B-1'), request: { method: 'POST', url: 'Patient' } },
      { resource: observation('Patient/nobody'), request: { method: 'POST', url: 'Observation' } },
      { request: { method: 'GET', url: 'Patient?identifier=urn:mrn|B-1' } },
      { request: { method: 'DELETE', url: 'Patient/x' } },
      { resource: observation('urn:uuid:0a6b0e34-5d3b-4f2a-9a54-7f0d6f0d1e11'), request: { method: 'POST', url: 'Observation' } },
      { request: { url: 'Patient' } },
      { request: { method: 'GET', url: `Patient?_id=${Array.from({ length: 201 }, (_, i) => `id-${i}`).join(',')}` } },
      { request: { method: 'HEAD', url: 'Patient?identifier=urn:mrn|B-1' } },
    ]),
  });
  assert.equal(response.statusCode, 200, response.body);
  const answer = response.json();
  assert.equal(answer.type, 'batch-response');
  assert.deepEqual(answer.entry.map((entry: Json) => entry.response.status.slice(0, 3)), ['201', '422', '200', '405', '400', '400', '400', '200']);
  assert.equal(answer.entry[6].response.outcome.issue[0].code, 'too-costly', 'the per-key search limits apply to a search entry');
  assert.equal(answer.entry[7].resource, undefined, 'HEAD: no body');
  assert.equal(answer.entry[2].resource.total, 1, 'the read ran after the create');
  assert.equal(answer.entry[3].response.outcome.resourceType, 'OperationOutcome');
  assert.match(answer.entry[4].response.outcome.issue[0].diagnostics, /independent/);
});

test('bad Bundles are refused whole with a clear OperationOutcome', async () => {
  const client = await fhirClient(app, db.database);
  const patientUrl = `urn:uuid:${randomUUID()}`;
  const cases: [string, unknown, number, RegExp][] = [
    ['not a Bundle', patientBody('X'), 400, /takes a Bundle/],
    ['a searchset', bundle('searchset', []), 400, /batch or a transaction/],
    ['not JSON', '{', 400, /not valid JSON/],
    ['entries over the limit', bundle('batch', Array.from({ length: maxEntries + 1 }, () => ({ request: { method: 'GET', url: 'Patient' } }))), 413, new RegExp(`at most ${maxEntries}`)],
    ['a fullUrl twice', bundle('transaction', [
      { fullUrl: patientUrl, resource: patientBody('D-1'), request: { method: 'POST', url: 'Patient' } },
      { fullUrl: patientUrl, resource: patientBody('D-2'), request: { method: 'POST', url: 'Patient' } },
    ]), 400, /same fullUrl/],
    ['an entry without request', bundle('transaction', [{ resource: patientBody('N-1') }]), 400, /^entry 0: the entry has no request/],
    ['an unknown method', bundle('transaction', [{ request: { method: 'FETCH', url: 'Patient' } }]), 400, /^entry 0: request.method "FETCH"/],
    ['delete', bundle('transaction', [{ request: { method: 'DELETE', url: 'Patient/x' } }]), 405, /does not offer delete/],
    ['an unknown type', bundle('transaction', [{ request: { method: 'GET', url: 'Medication/x' } }]), 404, /not a resource type/],
    ['a write to the read-only view', bundle('transaction', [{ resource: { resourceType: 'DiagnosticReport' }, request: { method: 'POST', url: 'DiagnosticReport' } }]), 405, /does not offer create/],
    ['an unresolvable urn:uuid', bundle('transaction', [{ resource: observation(`urn:uuid:${randomUUID()}`), request: { method: 'POST', url: 'Observation' } }]), 400, /names no entry/],
    ['an invalid resource', bundle('transaction', [{ fullUrl: patientUrl, resource: { resourceType: 'Patient', gender: 42 }, request: { method: 'POST', url: 'Patient' } }]), 400, new RegExp(`^entry 0 \\(${patientUrl}\\)`)],
    ['a resource of another type than the url', bundle('transaction', [{ resource: patientBody('W-1'), request: { method: 'POST', url: 'Observation' } }]), 400, /is not Observation/],
    ['a url on another server', bundle('transaction', [{ request: { method: 'GET', url: 'https://elsewhere.example/fhir/Patient/1' } }]), 400, /not on this server/],
    ['an unsupported search parameter in a read', bundle('transaction', [{ request: { method: 'GET', url: 'Patient?nickname=x' } }]), 400, /nickname/],
    ['two entries with the same conditional criteria (ambiguous)', bundle('transaction', [
      { resource: patientBody('A-1'), request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:mrn|A-1' } },
      { resource: patientBody('A-1'), request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:mrn|A-1' } },
    ]), 400, /ambiguous/],
    ['a conditional reference that matches nothing', bundle('transaction', [
      { resource: observation('Patient?identifier=urn:mrn|nobody'), request: { method: 'POST', url: 'Observation' } },
    ]), 412, /matches no Patient/],
  ];
  for (const [what, body, status, message] of cases) {
    const response = await client.request('POST', '/fhir', { body });
    assert.equal(response.statusCode, status, `${what}: ${response.body}`);
    assert.equal(response.json().resourceType, 'OperationOutcome', what);
    assert.match(response.json().issue[0].diagnostics, message, what);
  }
  const big = bundle('batch', [{ resource: patientBody('BIG', { text: { status: 'generated', div: `<div xmlns="http://www.w3.org/1999/xhtml">${'x'.repeat(maxBytes)}</div>` } }), request: { method: 'POST', url: 'Patient' } }]);
  const tooLarge = await client.request('POST', '/fhir', { body: big });
  assert.equal(tooLarge.statusCode, 413);
  assert.equal(tooLarge.json().resourceType, 'OperationOutcome');
  assert.equal((await client.request('GET', '/fhir')).statusCode, 405);
  assert.equal(await count(client, 'Patient'), 0, 'nothing of any of them was written');
});

test('circular references between new resources of one transaction resolve', async () => {
  const client = await fhirClient(app, db.database);
  const [a, b] = [`urn:uuid:${randomUUID()}`, `urn:uuid:${randomUUID()}`];
  const response = await client.request('POST', '/fhir', {
    body: bundle('transaction', [
      { fullUrl: a, resource: patientBody('C-1', { link: [{ other: { reference: b }, type: 'seealso' }] }), request: { method: 'POST', url: 'Patient' } },
      { fullUrl: b, resource: patientBody('C-2', { link: [{ other: { reference: a }, type: 'seealso' }] }), request: { method: 'POST', url: 'Patient' } },
    ]),
  });
  assert.equal(response.statusCode, 200, response.body);
  const [first, second] = response.json().entry.map((entry: Json) => entry.resource);
  assert.equal(first.link[0].other.reference, `Patient/${second.id}`);
  assert.equal(second.link[0].other.reference, `Patient/${first.id}`);
});

test('20 identical transactions at once create one patient; transactions locking criteria in opposite orders do not deadlock', async () => {
  const client = await fhirClient(app, db.database);
  const responses = await Promise.all(Array.from({ length: 20 }, () => client.request('POST', '/fhir', { body: patientWithObservations('RACE-1', 2) })));
  for (const response of responses) assert.equal(response.statusCode, 200, response.body);
  assert.equal(await count(client, 'Patient?identifier=urn:mrn|RACE-1'), 1);
  const patientId = responses[0]!.json().entry[2].resource.id;
  assert.equal(await count(client, `Observation?patient=${patientId}`), 40);
  assert.equal(responses.filter((response) => response.json().entry[2].response.status === '201 Created').length, 1);

  const two = (first: string, second: string) =>
    bundle('transaction', [first, second].map((mrn) => ({ resource: patientBody(mrn), request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=urn:mrn|${mrn}` } })));
  const crossed = await Promise.all(Array.from({ length: 10 }, (_, i) => client.request('POST', '/fhir', { body: i % 2 ? two('X-1', 'X-2') : two('X-2', 'X-1') })));
  for (const response of crossed) assert.equal(response.statusCode, 200, response.body);
  assert.equal(await count(client, 'Patient?identifier=urn:mrn|X-1'), 1);
  assert.equal(await count(client, 'Patient?identifier=urn:mrn|X-2'), 1);
});

test('the reads of a batch or transaction are in the data-access log', async () => {
  const client = await fhirClient(app, db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('AUD-B') })).json();
  await client.request('POST', '/fhir', { body: bundle('batch', [{ request: { method: 'GET', url: `Patient/${patient.id}` } }]) });
  await client.request('POST', '/fhir', { body: bundle('transaction', [{ request: { method: 'GET', url: `Patient?_id=${patient.id}` } }]) });
  await dataAccessRecorder(db.database).settled();
  const { entries } = await listDataAccess(db.database, client.site.siteId);
  assert.deepEqual(entries.map((entry) => [entry.interaction, entry.resourceIds]).reverse(), [
    ['read', [`Patient/${patient.id}`]],
    ['search', [`Patient/${patient.id}`]],
  ]);
});

test('fhir-kit-client posts a transaction and a batch', async () => {
  const owner = await fhirClient(app, db.database);
  const client = new Client({ baseUrl: `${url}/fhir`, customHeaders: { 'x-api-key': owner.key } });
  const answer = (await client.transaction({ body: patientWithObservations('KIT-1', 3) as never })) as Json;
  assert.equal(answer.type, 'transaction-response');
  const patientId = answer.entry[3].resource.id;
  assert.equal(await count(owner, `Observation?patient=${patientId}`), 3);
  const batch = (await client.batch({ body: bundle('batch', [{ request: { method: 'GET', url: `Patient/${patientId}` } }]) as never })) as Json;
  assert.equal(batch.entry[0].resource.id, patientId);
});
