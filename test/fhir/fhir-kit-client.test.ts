import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CapabilityTool, Client } from 'fhir-kit-client';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildFhirOrigin, fhirClient, patientBody } from './fhir-test-origin.ts';

// An independent FHIR client library against a real listening origin: the API as clients use it.
let db: TestDatabase;
let app: FastifyInstance;
let baseUrl: string;
before(async () => {
  db = await createTestDatabase();
  app = await buildFhirOrigin(db.database);
  await app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/fhir`;
});
after(async () => {
  await app.close();
  await db.drop();
});

type Any = Record<string, any>;

async function status(promise: Promise<unknown>): Promise<{ status: number; data: Any }> {
  try {
    await promise;
  } catch (error) {
    const response = (error as { response?: { status: number; data: Any } }).response;
    if (response) return response;
    throw error;
  }
  assert.fail('expected the request to fail');
}

test('fhir-kit-client: capabilities, create, read, update, vread, history, search with paging, errors', async () => {
  const { key } = await fhirClient(app, db.database);
  const client = new Client({ baseUrl, customHeaders: { 'X-API-Key': key } });

  const capabilities = (await client.capabilityStatement()) as Any;
  assert.equal(capabilities.fhirVersion, '4.0.1');
  const tool = new CapabilityTool(capabilities as never);
  assert.equal(tool.resourceCan('Patient', 'create'), true);
  assert.equal(tool.resourceCan('DiagnosticReport', 'create'), false);
  assert.equal(tool.resourceSearch('Patient', 'birthdate'), true);

  const created = (await client.create({ resourceType: 'Patient', body: patientBody('FK-1', { birthDate: '1970-02-03' }) as never })) as Any;
  assert.match(created.id, /^[0-9a-f-]{36}$/);
  const read = (await client.read({ resourceType: 'Patient', id: created.id })) as Any;
  assert.equal(read.birthDate, '1970-02-03');

  const updated = (await client.update({
    resourceType: 'Patient',
    id: created.id,
    body: { ...read, gender: 'female' } as never,
    options: { headers: { 'If-Match': 'W/"1"' } },
  })) as Any;
  assert.equal(updated.meta.versionId, '2');
  const stale = await status(client.update({ resourceType: 'Patient', id: created.id, body: read as never, options: { headers: { 'If-Match': 'W/"1"' } } }));
  assert.equal(stale.status, 412);
  assert.equal(stale.data.resourceType, 'OperationOutcome');

  const v1 = (await client.vread({ resourceType: 'Patient', id: created.id, version: '1' })) as Any;
  assert.equal(v1.gender, undefined);
  const history = (await client.history({ resourceType: 'Patient', id: created.id })) as Any;
  assert.equal(history.total, 2);

  const observation = (await client.create({
    resourceType: 'Observation',
    body: { resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] }, subject: { reference: `Patient/${created.id}` } } as never,
  })) as Any;
  for (let i = 2; i <= 5; i++) await client.create({ resourceType: 'Patient', body: patientBody(`FK-${i}`) as never });

  const byPatient = (await client.search({ resourceType: 'Observation', searchParams: { patient: created.id, code: 'http://loinc.org|2345-7' } })) as Any;
  assert.deepEqual(byPatient.entry.map((entry: Any) => entry.resource.id), [observation.id]);

  const seen: string[] = [];
  let page = (await client.search({ resourceType: 'Patient', searchParams: { _count: 2 } })) as Any;
  assert.equal(page.total, 5);
  while (page) {
    seen.push(...page.entry.map((entry: Any) => entry.resource.id));
    page = (await client.nextPage({ bundle: page as never })) as Any;
  }
  assert.equal(seen.length, 5);
  assert.equal(new Set(seen).size, 5);

  const deleted = await status(client.delete({ resourceType: 'Patient', id: created.id }));
  assert.equal(deleted.status, 405);
  assert.equal(deleted.data.resourceType, 'OperationOutcome');
  const missing = await status(client.read({ resourceType: 'Patient', id: '00000000-0000-4000-8000-000000000000' }));
  assert.equal(missing.status, 404);
  const invalid = await status(client.create({ resourceType: 'Patient', body: { resourceType: 'Patient', gender: 'robot' } as never }));
  assert.equal(invalid.status, 400);
  assert.deepEqual(invalid.data.issue[0].expression, ['Patient.gender']);
  const unauthenticated = await status(new Client({ baseUrl }).read({ resourceType: 'Patient', id: created.id }));
  assert.equal(unauthenticated.status, 401);
});

test('fhir-kit-client: a search with _include and _revinclude, paged with nextPage, and type history', async () => {
  const { key } = await fhirClient(app, db.database);
  const client = new Client({ baseUrl, customHeaders: { 'X-API-Key': key } });
  const tool = new CapabilityTool((await client.capabilityStatement()) as never);
  assert.equal(tool.resourceCan('Patient', 'history-type'), true);
  assert.equal(tool.serverCan('history-system'), true);
  const patient = (await client.create({ resourceType: 'Patient', body: patientBody('FK-INC') as never })) as Any;
  const observations: string[] = [];
  for (let i = 0; i < 3; i++) {
    const made = (await client.create({
      resourceType: 'Observation',
      body: { resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://loinc.org', code: '718-7' }] }, subject: { reference: `Patient/${patient.id}` } } as never,
    })) as Any;
    observations.push(made.id);
  }
  let page = (await client.search({
    resourceType: 'Observation',
    searchParams: { patient: patient.id, code: 'http://loinc.org|718-7', _include: 'Observation:patient', _count: 2 },
  })) as Any;
  assert.equal(page.total, 3);
  const matches: string[] = [];
  while (page) {
    matches.push(...page.entry.filter((entry: Any) => entry.search.mode === 'match').map((entry: Any) => entry.resource.id));
    assert.deepEqual(page.entry.filter((entry: Any) => entry.search.mode === 'include').map((entry: Any) => entry.resource.id), [patient.id]);
    page = (await client.nextPage({ bundle: page as never })) as Any;
  }
  assert.deepEqual(matches, observations);
  const reverse = (await client.search({ resourceType: 'Patient', searchParams: { _id: patient.id, _revinclude: 'Observation:patient' } })) as Any;
  assert.deepEqual(reverse.entry.filter((entry: Any) => entry.search.mode === 'include').map((entry: Any) => entry.resource.id), observations);
  const history = (await client.history({ resourceType: 'Observation' })) as Any;
  assert.deepEqual(history.entry.map((entry: Any) => entry.resource.id), [...observations].reverse());
});
