import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Bundle, Patient } from '@medplum/fhirtypes';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { minimalAdd, readAck, v3Fixture } from './support.ts';
import { v3TestSurface } from './test-surface.ts';

let db: TestDatabase;
let hl7: FastifyInstance;
let fhir: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  hl7 = await buildTestOrigin(v3TestSurface, db.database);
  fhir = await buildTestOrigin(fhirSurface, db.database);
});
after(async () => {
  await hl7.close();
  await fhir.close();
  await db.drop();
});

test('add, revise and merge over HL7 v3, read back over the FHIR API of the same site at once', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const other = await createTestApiKey(db.database, await createTestSite(db.database));
  const send = async (body: string | Buffer) => {
    const response = await hl7.inject({ method: 'POST', url: '/v3/ingest', headers: { 'content-type': 'application/xml', 'x-api-key': key }, payload: body });
    assert.equal(readAck(response.body).typeCode, 'AA', response.body);
  };
  const search = async (query: string, apiKey = key): Promise<Patient[]> => {
    const response = await fhir.inject({ url: `/fhir/Patient?${query}`, headers: { 'x-api-key': apiKey, accept: 'application/fhir+json' } });
    assert.equal(response.statusCode, 200, response.body);
    return ((JSON.parse(response.body) as Bundle<Patient>).entry ?? []).map((entry) => entry.resource!);
  };

  await send(v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  const [added] = await search('identifier=PIX10515W3');
  assert.equal(added?.name?.[0]?.text, 'Dr. MARY ROSE WASHINGTON II');
  assert.equal(added?.birthDate, '1977-12-08');
  assert.deepEqual(await search('identifier=PIX10515W3', other), [], 'another site never sees it');

  await send(v3Fixture('PIX_FEED_REV_Maximal_Request.xml'));
  const [revised] = await search('identifier=urn:oid:1.3.6.1.4.1.21367.2005.1.1|PIX10515W3');
  assert.equal(revised?.id, added?.id);
  assert.equal(revised?.name?.[0]?.family, 'WASHINGTON-UPDATE');
  assert.equal(revised?.gender, 'unknown');

  // The merge fixture folds 120-02 (root 1.2.3.4.666) into 120-01: register the obsolete one first.
  await send(minimalAdd('<id root="1.2.3.4.666" extension="120-02"/>', '<name><given>OLD</given><family>RECORD</family></name>'));
  await send(v3Fixture('PIX_FEED_MERGE_Maximal_Request.xml'));
  const [survivor] = await search('identifier=urn:oid:1.2.3.4.5.1000|120-01');
  assert.ok(survivor);
  assert.equal(survivor.link?.[0]?.type, 'replaces');
  const obsoleteId = survivor.link![0]!.other.reference!.replace('Patient/', '');
  const read = await fhir.inject({ url: `/fhir/Patient/${obsoleteId}`, headers: { 'x-api-key': key } });
  const obsolete = JSON.parse(read.body) as Patient;
  assert.equal(obsolete.active, false);
  assert.deepEqual(obsolete.link, [{ other: { reference: `Patient/${survivor.id}` }, type: 'replaced-by' }]);
  assert.ok(survivor.identifier?.some((id) => id.value === '120-02' && id.use === 'old'));
});
