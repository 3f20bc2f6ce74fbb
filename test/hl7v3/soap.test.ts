import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { soap12Namespace, wsaNamespace } from '../../src/hl7v3/soap/soap-envelope.ts';
import { parseXml } from '../../src/hl7v3/xml/parse.ts';
import type { XmlElement } from '../../src/hl7v3/xml/element.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { minimalAdd, readAck, v3Fixture } from './support.ts';
import { v3TestSurface } from './test-surface.ts';

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

/** An ITI-44 request as IHE web-services senders post it (SOAP 1.2 + WS-Addressing). */
function soapRequest(message: string | Buffer, messageId: string): string {
  const body = message.toString().replace(/^<\?xml[^?]*\?>\s*/, '');
  return `<?xml version="1.0" encoding="UTF-8"?>
<soap:Envelope xmlns:soap="${soap12Namespace}" xmlns:wsa="${wsaNamespace}">
  <soap:Header>
    <wsa:Action soap:mustUnderstand="true">urn:hl7-org:v3:PRPA_IN201301UV02</wsa:Action>
    <wsa:MessageID>${messageId}</wsa:MessageID>
    <wsa:ReplyTo><wsa:Address>http://www.w3.org/2005/08/addressing/anonymous</wsa:Address></wsa:ReplyTo>
    <wsa:To>http://127.0.0.1/v3/ingest</wsa:To>
  </soap:Header>
  <soap:Body>${body}</soap:Body>
</soap:Envelope>`;
}

function readSoapAnswer(xml: string): { action?: string; relatesTo?: string; ack: ReturnType<typeof readAck> } {
  const envelope = parseXml(Buffer.from(xml));
  assert.equal(envelope.name, 'Envelope');
  assert.equal(envelope.namespace, soap12Namespace);
  const child = (parent: XmlElement | undefined, name: string) => parent?.children.find((c) => c.name === name);
  const header = child(envelope, 'Header');
  const mcci = child(child(envelope, 'Body'), 'MCCI_IN000002UV01');
  assert.ok(mcci, 'the Body holds the acknowledgement');
  // Re-read the acknowledgement on its own, as a SOAP stack hands the Body to the application.
  const bodyText = xml.slice(xml.indexOf('<MCCI_IN000002UV01'), xml.indexOf('</MCCI_IN000002UV01>') + '</MCCI_IN000002UV01>'.length);
  const action = child(header, 'Action')?.text.trim();
  const relatesTo = child(header, 'RelatesTo')?.text.trim();
  return { ...(action ? { action } : {}), ...(relatesTo ? { relatesTo } : {}), ack: readAck(bodyText) };
}

async function post(key: string, body: string, contentType = 'application/soap+xml; charset=UTF-8; action="urn:hl7-org:v3:PRPA_IN201301UV02"') {
  return app.inject({ method: 'POST', url: '/v3/ingest', headers: { 'content-type': contentType, 'x-api-key': key }, payload: body });
}

test('a SOAP 1.2 request is answered with the acknowledgement in a SOAP 1.2 envelope, related to its MessageID', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const response = await post(key, soapRequest(v3Fixture('PIX_FEED_REG_Maximal_Request.xml'), 'urn:uuid:9b5a6d5e-1111-4222-8333-444455556666'));
  assert.equal(response.statusCode, 200, response.body);
  assert.match(response.headers['content-type'] as string, /^application\/soap\+xml/);
  const answer = readSoapAnswer(response.body);
  assert.equal(answer.action, 'urn:hl7-org:v3:MCCI_IN000002UV01');
  assert.equal(answer.relatesTo, 'urn:uuid:9b5a6d5e-1111-4222-8333-444455556666');
  assert.equal(answer.ack.typeCode, 'AA');
  assert.deepEqual(answer.ack.target, { root: '21acf7be-007c-41e6-b176-d0969794983b', extension: '345' });
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('PIX10515W3'));

  // Re-sent with a new MessageID: the original acknowledgement, related to the new request.
  const again = await post(key, soapRequest(v3Fixture('PIX_FEED_REG_Maximal_Request.xml'), 'urn:uuid:other'));
  const second = readSoapAnswer(again.body);
  assert.equal(second.relatesTo, 'urn:uuid:other');
  assert.deepEqual(second.ack, answer.ack);
});

test('over SOAP, AE and AR travel in a 200 response (SOAP 1.2 HTTP binding); the typeCode tells', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const bad = await post(key, soapRequest(minimalAdd('<id root="1.2.3" extension="S1"/>', '<birthTime value="2001"/><administrativeGenderCode code="Z"/>'), 'urn:uuid:bad'));
  assert.equal(bad.statusCode, 200);
  assert.equal(readSoapAnswer(bad.body).ack.typeCode, 'AE');
  const unsupported = await post(key, soapRequest(v3Fixture('Ack.xml'), 'urn:uuid:ack'));
  assert.equal(unsupported.statusCode, 200);
  assert.equal(readSoapAnswer(unsupported.body).ack.typeCode, 'AR');
  const broken = await post(key, '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>');
  assert.equal(broken.statusCode, 200);
  assert.equal(readSoapAnswer(broken.body).ack.details[0]?.code, 'SYN');
  const empty = await post(key, `<soap:Envelope xmlns:soap="${soap12Namespace}"><soap:Body/></soap:Envelope>`);
  assert.match(readSoapAnswer(empty.body).ack.details[0]!.text, /SOAP Body holds no message/);
});

test('a SOAP 1.1 envelope is refused in plain XML, naming SOAP 1.2', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const soap11 = `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${v3Fixture('PIX_FEED_REG_Maximal_Request.xml')}</s:Body></s:Envelope>`;
  const response = await post(key, soap11, 'text/xml');
  assert.equal(response.statusCode, 400);
  assert.match(readAck(response.body).details[0]!.text, /SOAP 1\.2/);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('PIX10515W3'), undefined);
});
