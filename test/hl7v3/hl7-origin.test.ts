import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { listMessages } from '../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { hl7Surface } from '../../src/server/hl7-origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { readAck, v3Fixture, v3FixtureDir } from './support.ts';

let db: TestDatabase;
let app: FastifyInstance;
before(async () => {
  db = await createTestDatabase();
  app = await buildTestOrigin(hl7Surface, db.database);
});
after(async () => {
  await app.close();
  await db.drop();
});

test('the HL7 origin as deployed: v2 and v3 side by side, each with its own media types and error format, one log', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const post = (url: string, contentType: string, payload: Buffer | string) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': contentType, 'x-api-key': key }, payload });

  const v3 = await post('/v3/ingest', 'application/xml', v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(v3.statusCode, 200);
  assert.equal(readAck(v3.body).typeCode, 'AA');
  const v2 = await post('/v2/ingest', 'text/plain', readFileSync(join(v3FixtureDir, 'v2', 'PIX_FEED_REV_Maximal_Request.hl7')));
  assert.equal(v2.statusCode, 200, v2.body);
  assert.equal((JSON.parse(v2.body) as { ack_code: string }).ack_code, 'AA');
  // The v2 revise (A08) updated the patient the v3 add created: one patient domain.
  const patient = await resourceStore(db.database, site).findPatientByBusinessIdentifier('PIX10515W3');
  assert.equal(patient?.name?.[0]?.family, 'WASHINGTON-UPDATE');
  assert.equal(patient?.meta?.versionId, '2');

  // Each route's parsers are its own: XML is not HL7 v2, ER7 text is not HL7 v3.
  const xmlToV2 = await post('/v2/ingest', 'application/xml', v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(xmlToV2.statusCode, 415);
  assert.match(xmlToV2.headers['content-type'] as string, /json/);
  const textToV3 = await post('/v3/ingest', 'text/plain', 'MSH|^~\\&|');
  assert.equal(textToV3.statusCode, 415);
  assert.equal(readAck(textToV3.body).typeCode, 'AE');
  // Unknown /v3/ paths answer in acknowledgements, others in JSON.
  assert.equal(readAck((await app.inject({ url: '/v3/nothing', headers: { 'x-api-key': key } })).body).typeCode, 'AE');
  assert.match((await app.inject({ url: '/v2/nothing', headers: { 'x-api-key': key } })).headers['content-type'] as string, /json/);

  const log = await listMessages(db.database, site);
  assert.deepEqual(log.messages.map((m) => [m.protocol, m.ackCode]), [['hl7v2', 'AA'], ['hl7v3', 'AA']]);
});
