// POST /v2/ingest on an HL7 origin built by the platform: statuses, JSON answer, media types,
// authentication, size limit, charset, and batches (each message taken as if sent alone).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { hl7v2OnlySurface } from '../../src/hl7v2/surface.ts';
import { Database } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { fixture, message } from './support.ts';

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(hl7v2OnlySurface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

async function keyedSite(): Promise<{ site: SiteContext; key: string }> {
  const site = await createTestSite(db.database);
  return { site, key: await createTestApiKey(db.database, site) };
}

const post = (key: string | undefined, body: string | Buffer, contentType = 'text/plain') =>
  app.inject({ method: 'POST', url: '/v2/ingest', headers: { 'content-type': contentType, ...(key ? { 'x-api-key': key } : {}) }, payload: body });

test('AA is 200 with the JSON answer, and the patient is readable in the same site at once', async () => {
  const { site, key } = await keyedSite();
  const response = await post(key, fixture('hl7v2/microsoft-FHIR-Converter/ADT04-251.hl7'));
  assert.equal(response.statusCode, 200);
  const body = response.json();
  assert.equal(body.success, true);
  assert.equal(body.message_type, 'ADT^A04');
  assert.equal(body.ack_code, 'AA');
  assert.match(body.ack, /^MSH\|\^~\\&\|.*\rMSA\|AA\|/);
  assert.deepEqual(body.errors, []);
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('MRN12345'));
});

test('x-application/hl7-v2+er7 is accepted; AE is 422 and lists the errors', async () => {
  const { key } = await keyedSite();
  const response = await post(key, fixture('hl7v2/oehf-ipf/iti8-a01-incomplete.hl7'), 'x-application/hl7-v2+er7');
  assert.equal(response.statusCode, 422);
  const body = response.json();
  assert.equal(body.success, false);
  assert.equal(body.ack_code, 'AE');
  assert.equal(body.errors[0].code, 100);
  assert.match(body.ack, /\rMSA\|AE\|/);
});

test('a body that is not HL7 is 400; an unsupported type is 400 with AR', async () => {
  const { key } = await keyedSite();
  const junk = await post(key, 'hello world');
  assert.equal(junk.statusCode, 400);
  assert.equal(junk.json().ack_code, 'AE');
  const empty = await post(key, '');
  assert.equal(empty.statusCode, 400);
  const unsupported = await post(key, message(['PID|1||1'], { type: 'ORM^O01' }));
  assert.equal(unsupported.statusCode, 400);
  assert.equal(unsupported.json().ack_code, 'AR');
});

test('415 for other media types, 401 without a key, 413 over 1 MiB: all in the JSON shape', async () => {
  const { key } = await keyedSite();
  const wrongType = await post(key, '{"a":1}', 'application/json');
  assert.equal(wrongType.statusCode, 415);
  assert.equal(wrongType.json().success, false);
  const noKey = await post(undefined, message(['PID|1||1']));
  assert.equal(noKey.statusCode, 401);
  const big = await post(key, Buffer.concat([message(['PID|1||1']), Buffer.from(`\rNTE|1||${'x'.repeat(1024 * 1024)}`)]));
  assert.equal(big.statusCode, 413);
  assert.equal(big.json().success, false);
  assert.ok(!JSON.stringify(big.json()).includes('at '), 'no stack trace');
});

test('the Content-Type charset is the default for a message without MSH-18', async () => {
  const { site, key } = await keyedSite();
  const bytes = Buffer.from(`MSH|^~\\&|A|B|C|D|20240101||ADT^A01|CS-1|P|2.5.1\rPID|1||CS1^^^H^MR||Gro\xdf^J\xfcrgen`, 'latin1');
  const response = await post(key, bytes, 'text/plain; charset=ISO-8859-1');
  assert.equal(response.statusCode, 200, response.body);
  const patient = (await resourceStore(db.database, site).findPatientByBusinessIdentifier('CS1'))!;
  assert.equal(patient.name![0]!.family, 'Groß');
  assert.deepEqual(patient.name![0]!.given, ['Jürgen']);
});

test('a duplicate is answered with the original ACK and flagged', async () => {
  const { key } = await keyedSite();
  const raw = message(['PID|1||D1^^^H^MR'], { controlId: 'HTTP-DUP' });
  const first = (await post(key, raw)).json();
  const second = (await post(key, raw)).json();
  assert.equal(second.duplicate, true);
  assert.equal(second.ack, first.ack);
});

test('503 with Retry-After when the database is away', async () => {
  const { key } = await keyedSite();
  const down = new Database({ connectionString: 'postgres://postgres@127.0.0.1:1/none', maxConnections: 1 });
  const origin = await buildTestOrigin(hl7v2OnlySurface, down);
  try {
    const response = await origin.inject({ method: 'POST', url: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': key }, payload: message(['PID|1||1']) });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '5');
    assert.equal(response.json().success, false);
  } finally {
    await origin.close();
    await down.close();
  }
});

test('what HL7 stored is read back over the FHIR API of the same site, and not of another', async () => {
  const { fhirSurface } = await import('../../src/fhir/surface.ts');
  const fhir = await buildTestOrigin(fhirSurface, db.database);
  try {
    const { key } = await keyedSite();
    const other = await keyedSite();
    assert.equal((await post(key, fixture('hl7v2/oehf-ipf/oru-r01-25.hl7'))).statusCode, 200);
    const get = (url: string, apiKey: string) => fhir.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
    const patients = (await get('/fhir/Patient?identifier=00000111', key)).json();
    assert.equal(patients.entry.length, 1);
    const patient = patients.entry[0].resource;
    assert.equal(patient.name[0].family, 'Everywoman');
    assert.equal(patient.identifier[0].system, 'urn:oid:2.16.840.1.113883.19.3.2.1');
    const observations = (await get(`/fhir/Observation?patient=Patient/${patient.id}`, key)).json();
    assert.equal(observations.entry.length, 4);
    const sodium = observations.entry.map((e: { resource: { code: { coding: { code: string }[] } } }) => e.resource).find((o: { code: { coding: { code: string }[] } }) => o.code.coding[0]!.code === '2951-2');
    assert.equal(sodium.valueQuantity.value, 140);
    assert.equal(sodium.valueQuantity.unit, 'meq/L');
    assert.equal((await get('/fhir/Patient?identifier=00000111', other.key)).json().entry?.length ?? 0, 0);
    assert.equal((await get(`/fhir/Patient/${patient.id}`, other.key)).statusCode, 404);
  } finally {
    await fhir.close();
  }
});

test('the origin documents POST /v2/ingest in its OpenAPI document', async () => {
  const response = await app.inject({ method: 'GET', url: '/api/documentation/openapi.json' });
  assert.equal(response.statusCode, 200);
  const operation = response.json().paths['/v2/ingest'].post;
  assert.ok(operation.requestBody.content['x-application/hl7-v2+er7']);
  assert.ok(operation.responses['422']);
});

const adt = (id: string, identifier = id) => `MSH|^~\\&|LAB|HOSP|GW|SITE|20241005123045-0500||ADT^A08^ADT_A01|${id}|P|2.5.1\rEVN|A08\rPID|1||${identifier}^^^HOSP^MR||Doe^Jane||19800101|F\r`;

test('a batch file: every message applied on its own, one AE among them; a re-sent batch changes nothing', async () => {
  const { site, key } = await keyedSite();
  const body = `FHS|^~\\&|LAB|HOSP|GW|SITE|20241005||results.hl7||F-1\rBHS|^~\\&|LAB|HOSP|GW|SITE|20241005||||B-1\r${adt('B1')}${adt('B2', '')}${adt('B3')}BTS|3\rFTS|1\r`;
  const post = () => app.inject({ method: 'POST', url: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': key }, payload: body });
  const response = await post();
  assert.equal(response.statusCode, 422);
  const answer = response.json();
  assert.equal(answer.ack_code, 'AE');
  assert.equal(answer.control_id, 'F-1');
  assert.deepEqual(answer.messages.map((m: { control_id: string; ack_code: string }) => [m.control_id, m.ack_code]), [['B1', 'AA'], ['B2', 'AE'], ['B3', 'AA']]);
  assert.deepEqual(answer.errors.map((e: { code: number; message: string }) => e.code), [101]);
  assert.match(answer.errors[0].message, /^message B2: PID-3/);
  const segments: string[] = answer.ack.split('\r');
  assert.match(segments[0]!, /^FHS\|\^~\\&\|GW\|SITE\|LAB\|HOSP\|.*\|F-1$/);
  assert.match(segments[1]!, /^BHS\|.*\|B-1$/);
  assert.deepEqual(segments.filter((s) => s.startsWith('MSA|')).map((s) => s.split('|').slice(0, 3).join('|')), ['MSA|AA|B1', 'MSA|AE|B2', 'MSA|AA|B3']);
  assert.deepEqual(segments.slice(-2), ['BTS|3', 'FTS|1']);
  const store = resourceStore(db.database, site);
  assert.ok(await store.findPatientByBusinessIdentifier('B1'));
  assert.ok(await store.findPatientByBusinessIdentifier('B3'));

  const again = (await post()).json();
  assert.deepEqual(again.messages.map((m: { duplicate: boolean; ack: string }) => [m.duplicate, m.ack]), answer.messages.map((m: { ack: string }) => [true, m.ack]));
  assert.equal((await store.findPatientByBusinessIdentifier('B1'))!.meta!.versionId, '1');
});

test('several messages back to back without an envelope are each acknowledged, 200 when all are AA', async () => {
  const { key } = await keyedSite();
  const response = await app.inject({ method: 'POST', url: '/v2/ingest', headers: { 'content-type': 'text/plain', 'x-api-key': key }, payload: (adt('P1') + adt('P2')).replaceAll('\r', '\n') });
  assert.equal(response.statusCode, 200);
  const answer = response.json();
  assert.equal(answer.success, true);
  assert.deepEqual(answer.messages.map((m: { ack_code: string }) => m.ack_code), ['AA', 'AA']);
  assert.equal(answer.ack.split('\r').filter((s: string) => s.startsWith('MSA|')).length, 2);
  assert.doesNotMatch(answer.ack, /BHS|BTS/);
});

test('a stray control character in a name is removed with a warning; the message is applied', async () => {
  const { site, key } = await keyedSite();
  const response = await post(key, message(['PID|1||CTL1^^^H^MR||Do\x07e^Jane||19800101|F']));
  assert.equal(response.statusCode, 200, response.body);
  assert.deepEqual(response.json().warnings.map((w: { location: string }) => w.location), ['PID[1]-5']);
  assert.equal((await resourceStore(db.database, site).findPatientByBusinessIdentifier('CTL1'))!.name![0]!.family, 'Doe');
});
