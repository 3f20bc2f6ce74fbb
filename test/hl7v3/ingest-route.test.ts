import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import type { Patient } from '@medplum/fhirtypes';
import { listMessages } from '../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { minimalAdd, readAck, v3Fixture, v3FixtureDir } from './support.ts';
import { v3TestSurface } from './test-surface.ts';

const run = promisify(execFile);

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(v3TestSurface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

async function siteWithKey(): Promise<{ site: SiteContext; key: string }> {
  const site = await createTestSite(db.database);
  return { site, key: await createTestApiKey(db.database, site) };
}

function post(key: string | undefined, body: string | Buffer, contentType = 'application/xml') {
  return app.inject({
    method: 'POST',
    url: '/v3/ingest',
    headers: { 'content-type': contentType, ...(key ? { 'x-api-key': key } : {}) },
    payload: body,
  });
}

test('every patient feed fixture is acknowledged AA and read back from the store', async () => {
  const { site, key } = await siteWithKey();
  const store = resourceStore(db.database, site);

  const added = await post(key, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(added.statusCode, 200, added.body);
  assert.match(added.headers['content-type'] as string, /^application\/xml/);
  const addAck = readAck(added.body);
  assert.equal(addAck.typeCode, 'AA');
  assert.deepEqual(addAck.target, { root: '21acf7be-007c-41e6-b176-d0969794983b', extension: '345' });
  assert.deepEqual(addAck.receiverIds, ['1.2.840.114350.1.13.99998.8734']);
  assert.deepEqual(addAck.senderIds, ['1.2.840.114350.1.13.99999.4567']);
  assert.deepEqual(addAck.details.map((d) => [d.typeCode, d.code]), [['W', 'SYN101']]);

  const patient = await store.findPatientByBusinessIdentifier('PIX10515W3');
  assert.ok(patient, 'the added patient is stored');
  assert.equal(patient.identifier?.[0]?.system, 'urn:oid:1.3.6.1.4.1.21367.2005.1.1');
  assert.equal(patient.name?.[0]?.family, 'WASHINGTON');
  assert.equal(patient.gender, 'female');
  assert.equal(patient.birthDate, '1977-12-08');
  assert.equal(patient.address?.[0]?.line?.[0], '100 JORIE BLVD 5');

  const revised = await post(key, v3Fixture('PIX_FEED_REV_Maximal_Request.xml'));
  assert.equal(revised.statusCode, 200, revised.body);
  assert.equal(readAck(revised.body).typeCode, 'AA');
  const after = await store.read<Patient>('Patient', patient.id!);
  assert.equal(after?.name?.[0]?.family, 'WASHINGTON-UPDATE');
  assert.equal(after?.gender, 'unknown');
  assert.equal(after?.address?.[0]?.line?.[0], '1 UPDATE ADDRESS');
  assert.equal(after?.meta?.versionId, '2');

  // The merge fixture's prior id is not known in this site: accepted with a warning.
  const merged = await post(key, v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml'));
  assert.equal(merged.statusCode, 200, merged.body);
  const mergeAck = readAck(merged.body);
  assert.equal(mergeAck.typeCode, 'AA');
  assert.deepEqual(mergeAck.details.map((d) => [d.typeCode, d.code, d.codeSystem]), [['W', '204', '2.16.840.1.113883.12.357']]);
  const survivor = await store.findPatientByBusinessIdentifier('120-01');
  assert.ok(survivor, 'the surviving patient is registered');
  assert.equal(survivor.name, undefined, 'the placeholder name "Unknown" is not stored');

  const log = await listMessages(db.database, site);
  assert.deepEqual(
    log.messages.map((m) => [m.protocol, m.messageType, m.ackCode, m.outcome, m.controlId]).reverse(),
    [
      ['hl7v3', 'PRPA_IN201301UV02', 'AA', 'processed', '21acf7be-007c-41e6-b176-d0969794983b^345'],
      ['hl7v3', 'PRPA_IN201302UV02', 'AA', 'processed', '21acf7be-007c-41e6-b176-d0969794983b^678'],
      ['hl7v3', 'PRPA_IN201304UV02', 'AA', 'processed', '52918b99-dc72-4d17-8714-f39b9b6f16e8^123'],
    ],
  );
  assert.equal(log.messages[0]!.sendingApplication, '1.2.840.114350.1.13.99998.8734');
  assert.equal(log.messages[0]!.sendingFacility, '1.2.840.114350.1.13.99998');
});

test('add, revise, then merge: the prior patient is folded into the survivor as an A40 merge does', async () => {
  const { site, key } = await siteWithKey();
  const store = resourceStore(db.database, site);
  // The obsolete registration 120-02 (root 1.2.3.4.666) exists first.
  const prior = minimalAdd('<id root="1.2.3.4.666" extension="120-02"/>', '<name><given>OLD</given><family>RECORD</family></name><birthTime value="19800101"/>');
  assert.equal((await post(key, prior)).statusCode, 200);
  const survivorAdd = minimalAdd('<id root="1.2.3.4.5.1000" extension="120-01"/>', '<name><given>KEPT</given><family>NAME</family></name>').replace('extension="m1"', 'extension="m2"');
  assert.equal((await post(key, survivorAdd)).statusCode, 200);
  const revise = survivorAdd.replaceAll('PRPA_IN201301UV02', 'PRPA_IN201302UV02').replace('extension="m2"', 'extension="m3"').replace('KEPT', 'REVISED');
  assert.equal((await post(key, revise)).statusCode, 200);

  const merged = await post(key, v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml'));
  assert.equal(merged.statusCode, 200, merged.body);
  assert.deepEqual(readAck(merged.body).details, []);

  const source = (await store.findByIdentifier<Patient>('Patient', { value: '120-02' })).find((p) => p.active === false);
  const target = await store.findPatientByBusinessIdentifier('120-01');
  assert.ok(source && target);
  assert.deepEqual(source.link, [{ other: { reference: `Patient/${target.id}` }, type: 'replaced-by' }]);
  assert.deepEqual(target.link, [{ other: { reference: `Patient/${source.id}` }, type: 'replaces' }]);
  assert.deepEqual(
    target.identifier?.map((i) => [i.system, i.value, i.use]),
    [
      ['urn:oid:1.2.3.4.5.1000', '120-01', undefined],
      ['urn:oid:1.2.3.4.666', '120-02', 'old'],
    ],
  );
  assert.equal(target.name?.[0]?.given?.[0], 'REVISED', 'the placeholder name of the merge does not overwrite the survivor');

  // Re-sent: the stored acknowledgement, and nothing changes.
  const versionBefore = (await store.read<Patient>('Patient', target.id!))?.meta?.versionId;
  const again = await post(key, v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml'));
  assert.equal(again.statusCode, 200);
  assert.equal(again.body, merged.body);
  assert.equal((await store.read<Patient>('Patient', target.id!))?.meta?.versionId, versionBefore);
});

test('a re-sent message id returns the original acknowledgement and changes nothing, even with new content', async () => {
  const { site, key } = await siteWithKey();
  const store = resourceStore(db.database, site);
  const first = await post(key, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  const patient = await store.findPatientByBusinessIdentifier('PIX10515W3');
  const altered = v3Fixture('PIX_FEED_REG_Maximal_Request.xml').toString().replace('<family>WASHINGTON</family>', '<family>CHANGED</family>');
  const second = await post(key, altered);
  assert.equal(second.statusCode, 200);
  assert.equal(second.body, first.body, 'byte-identical acknowledgement');
  const now = await store.read<Patient>('Patient', patient!.id!);
  assert.equal(now?.name?.[0]?.family, 'WASHINGTON');
  assert.equal(now?.meta?.versionId, patient!.meta?.versionId);
  assert.equal((await listMessages(db.database, site)).messages.length, 1);

  // Concurrent copies: exactly one is applied, all get the same acknowledgement.
  const copies = await Promise.all(Array.from({ length: 5 }, () => post(key, v3Fixture('PIX_FEED_REV_Maximal_Request.xml'))));
  assert.deepEqual(new Set(copies.map((c) => c.statusCode)), new Set([200]));
  assert.equal(new Set(copies.map((c) => c.body)).size, 1);
  assert.equal((await store.read<Patient>('Patient', patient!.id!))?.meta?.versionId, '2');
  assert.equal((await listMessages(db.database, site)).messages.length, 2);
});

test('the same message id in another site is that site\'s own message; patients never cross sites', async () => {
  const a = await siteWithKey();
  const b = await siteWithKey();
  assert.equal((await post(a.key, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'))).statusCode, 200);
  assert.equal(await resourceStore(db.database, b.site).findPatientByBusinessIdentifier('PIX10515W3'), undefined);
  const inB = await post(b.key, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(inB.statusCode, 200);
  const patientA = await resourceStore(db.database, a.site).findPatientByBusinessIdentifier('PIX10515W3');
  const patientB = await resourceStore(db.database, b.site).findPatientByBusinessIdentifier('PIX10515W3');
  assert.ok(patientA && patientB);
  assert.notEqual(patientA.id, patientB.id);
  assert.equal(await resourceStore(db.database, b.site).read('Patient', patientA.id!), undefined);
});

test('content errors are AE (422) with one detail per problem, and nothing is stored', async () => {
  const { site, key } = await siteWithKey();
  const bad = minimalAdd('<id root="1.2.3" extension="E1"/>', '<administrativeGenderCode code="Q"/><birthTime value="19991340"/>');
  const response = await post(key, bad);
  assert.equal(response.statusCode, 422);
  const ack = readAck(response.body);
  assert.equal(ack.typeCode, 'AE');
  assert.deepEqual(ack.target, { root: '1.2.3.4', extension: 'm1' });
  assert.deepEqual(ack.details.map((d) => [d.typeCode, d.code]), [['E', 'SYN103'], ['E', 'SYN102']]);
  assert.match(ack.details[1]!.text, /birthTime "19991340"/);
  assert.match(ack.details[1]!.location!, /patientPerson\[1\]\/birthTime\[1\]$/);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('E1'), undefined);
  const [logged] = (await listMessages(db.database, site)).messages;
  assert.equal(logged?.outcome, 'error');
  assert.deepEqual(logged?.problems.map((p) => p.code), ['SYN103', 'SYN102']);

  const noId = await post(key, bad.replace('<id root="1.2.3.4" extension="m1"/>', ''));
  assert.equal(noId.statusCode, 422);
  assert.ok(readAck(noId.body).details.some((d) => d.code === 'SYN105' && /no id/.test(d.text)));

  const samePatient = v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml').toString().replace('root="1.2.3.4.666" extension="120-02"', 'root="1.2.3.4.5.1000" extension="120-01"');
  const selfMerge = await post(key, samePatient);
  assert.equal(selfMerge.statusCode, 422);
  assert.equal(readAck(selfMerge.body).details[0]?.code, 'SYN113');
});

test('an unsupported interaction is AR naming it; the acknowledgement fixture itself is one', async () => {
  const { site, key } = await siteWithKey();
  const response = await post(key, v3Fixture('Ack.xml'));
  assert.equal(response.statusCode, 400);
  const ack = readAck(response.body);
  assert.equal(ack.typeCode, 'AR');
  // The target is the posted message's own id, not the id it acknowledged.
  assert.deepEqual(ack.target, { root: 'f531489e-67f2-11dc-984e-3603d6866807' });
  assert.equal(ack.details[0]?.code, 'NS200');
  assert.match(ack.details[0]!.text, /MCCI_IN000002UV01 is not supported/);
  const query = '<PRPA_IN201309UV02 xmlns="urn:hl7-org:v3"><id root="1.2.9" extension="q"/></PRPA_IN201309UV02>';
  const queryAnswer = readAck((await post(key, query)).body);
  assert.match(queryAnswer.details[0]!.text, /PRPA_IN201309UV02/);
  const log = await listMessages(db.database, site);
  assert.deepEqual(log.messages.map((m) => [m.outcome, m.ackCode]), [['rejected', 'AR'], ['rejected', 'AR']]);
});

test('bodies that are not HL7 v3 XML are AE (400) in an acknowledgement, and logged', async () => {
  const { site, key } = await siteWithKey();
  for (const body of ['MSH|^~\\&|A|B', '<a><b></a>', '<Patient xmlns="http://hl7.org/fhir"/>', '']) {
    const response = await post(key, body);
    assert.equal(response.statusCode, 400, body);
    const ack = readAck(response.body);
    assert.equal(ack.typeCode, 'AE');
    assert.equal(ack.target, undefined);
    assert.equal(ack.details[0]?.code, 'SYN');
  }
  const xxe = await post(key, '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><PRPA_IN201301UV02 xmlns="urn:hl7-org:v3">&e;</PRPA_IN201301UV02>');
  assert.equal(xxe.statusCode, 400);
  assert.match(readAck(xxe.body).details[0]!.text, /DOCTYPE/);
  assert.doesNotMatch(xxe.body, /root:/);
  const log = await listMessages(db.database, site);
  assert.equal(log.messages.length, 5);
  assert.ok(log.messages.every((m) => m.controlId === null && m.outcome === 'error'));
});

test('transport refusals are acknowledgements too: 401, 415, 413', async () => {
  const { key } = await siteWithKey();
  const unauthenticated = await post(undefined, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(unauthenticated.statusCode, 401);
  assert.equal(readAck(unauthenticated.body).typeCode, 'AR');
  assert.equal(readAck(unauthenticated.body).details[0]?.code, 'NS260');
  const wrongKey = await post(`cg_${'a'.repeat(12)}_${'b'.repeat(43)}`, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(wrongKey.statusCode, 401);

  const plain = await post(key, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'), 'text/plain');
  assert.equal(plain.statusCode, 415);
  assert.match(readAck(plain.body).details[0]!.text, /application\/xml/);
  const json = await post(key, '{"a":1}', 'application/json');
  assert.equal(json.statusCode, 415);

  const huge = await post(key, `<a>${' '.repeat(1024 * 1024 + 1)}</a>`);
  assert.equal(huge.statusCode, 413);
  assert.equal(readAck(huge.body).typeCode, 'AE');

  const get = await app.inject({ method: 'GET', url: '/v3/ingest', headers: { 'x-api-key': key } });
  assert.equal(get.statusCode, 404);
  assert.equal(readAck(get.body).typeCode, 'AE');
});

test('text/xml, application/hl7-v3+xml, a charset parameter and a namespace prefix are all accepted', async () => {
  const { site, key } = await siteWithKey();
  const prefixed = minimalAdd('<id root="1.2.3" extension="NS1"/>')
    .replace(/<(\/?)([A-Za-z])/g, '<$1hl7:$2')
    .replace('xmlns="urn:hl7-org:v3"', 'xmlns:hl7="urn:hl7-org:v3"');
  assert.equal((await post(key, prefixed, 'text/xml')).statusCode, 200);
  const latin1 = Buffer.from(minimalAdd('<id root="1.2.3" extension="L1"/>', '<name><family>M\u00fcller</family></name>').replace('m1', 'm9'), 'latin1');
  const response = await post(key, latin1, 'application/hl7-v3+xml; charset=ISO-8859-1');
  assert.equal(response.statusCode, 200, response.body);
  const patient = await resourceStore(db.database, site).findPatientByBusinessIdentifier('L1');
  assert.equal(patient?.name?.[0]?.family, 'Müller');
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('NS1'));
});

test('over a real socket: add, revise and an unsupported message by fetch, then a merge by curl, each answered in XML', async () => {
  const { site, key } = await siteWithKey();
  const server = await buildTestOrigin(v3TestSurface, db.database);
  try {
    const address = await server.listen({ port: 0, host: '127.0.0.1' });
    for (const [name, typeCode] of [['PIX_FEED_REG_Maximal_Request.xml', 'AA'], ['PIX_FEED_REV_Maximal_Request.xml', 'AA'], ['Ack.xml', 'AR']] as const) {
      const response = await fetch(`${address}/v3/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', 'x-api-key': key },
        body: v3Fixture(name),
      });
      assert.match(response.headers.get('content-type') ?? '', /^application\/xml/);
      assert.equal(readAck(await response.text()).typeCode, typeCode);
    }
    const stored = await resourceStore(db.database, site).findPatientByBusinessIdentifier('PIX10515W3');
    assert.equal(stored?.name?.[0]?.family, 'WASHINGTON-UPDATE');

    // A client nobody here wrote: curl posting the merge fixture file as it is.
    const { stdout } = await run('curl', [
      '--silent', '--show-error', '--max-time', '60', '--write-out', '\n%{http_code}',
      '-H', 'Content-Type: application/xml', '-H', `X-API-Key: ${key}`,
      '--data-binary', `@${join(v3FixtureDir, 'PIX_FEED_MERGE_Maximal_Request.xml')}`,
      `${address}/v3/ingest`,
    ]);
    const status = stdout.slice(stdout.lastIndexOf('\n') + 1);
    assert.equal(status, '200');
    assert.equal(readAck(stdout.slice(0, stdout.lastIndexOf('\n'))).typeCode, 'AA');
  } finally {
    await server.close();
  }
});

test('the example message of docs/hl7v3.md is accepted and answered as the page shows', async () => {
  const { site, key } = await siteWithKey();
  const page = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'hl7v3.md'), 'utf8');
  const [message, acknowledgement] = [...page.matchAll(/```xml\n([\s\S]*?)```/g)].map((block) => block[1]!);
  assert.ok(message !== undefined && acknowledgement !== undefined, 'docs/hl7v3.md shows a message and its acknowledgement');
  const response = await post(key, message!);
  assert.equal(response.statusCode, 200, response.body);
  const actual = readAck(response.body);
  const documented = readAck(acknowledgement!);
  assert.equal(actual.typeCode, documented.typeCode);
  assert.deepEqual(actual.target, documented.target);
  assert.deepEqual([actual.senderIds, actual.receiverIds], [documented.senderIds, documented.receiverIds]);
  assert.deepEqual(actual.details, documented.details);
  const patient = await resourceStore(db.database, site).findPatientByBusinessIdentifier('PIX10515W3');
  assert.equal(patient?.name?.[0]?.text, 'Dr. MARY ROSE WASHINGTON II');
});
