import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { processHl7v3Message } from '../../src/hl7v3/intake/process-message.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { Database } from '../../src/storage/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { readAck, v3Fixture } from './support.ts';
import { v3TestSurface } from './test-surface.ts';

// A real connection attempt to a port nobody listens on: the driver's own "connection refused".
let unreachable: Database;
before(() => {
  unreachable = new Database({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
});
after(() => unreachable.close());

const site: SiteContext = {
  siteId: '00000000-0000-4000-8000-000000000001',
  siteName: 'unreachable',
  aeTitle: 'UNREACHABLE',
  policies: { patientPutCreates: false, mllpAllowAnyIp: false },
  timeZone: null,
  actor: { kind: 'operator' },
};

test('database down while processing: AR with 503, addressed to the sender and naming the message', async () => {
  const result = await processHl7v3Message(unreachable, site, v3Fixture('PIX_FEED_REG_Maximal_Request.xml'));
  assert.equal(result.statusCode, 503);
  const ack = readAck(result.ackXml);
  assert.equal(ack.typeCode, 'AR');
  assert.deepEqual(ack.target, { root: '21acf7be-007c-41e6-b176-d0969794983b', extension: '345' });
  assert.deepEqual(ack.receiverIds, ['1.2.840.114350.1.13.99998.8734']);
  assert.equal(ack.details[0]?.code, 'INTERR');
  assert.match(ack.details[0]!.text, /again later/);
});

test('database down for a body that does not parse: still "retry later", never a permanent AE', async () => {
  // The refusal could not be logged, so the sender is told to retry rather than given an AE.
  const result = await processHl7v3Message(unreachable, site, Buffer.from('<not-closed>'));
  assert.equal(result.statusCode, 503);
  assert.equal(readAck(result.ackXml).typeCode, 'AR');
});

test('database down at authentication: the route answers AR 503 with Retry-After', async () => {
  const app = await buildTestOrigin(v3TestSurface, unreachable);
  try {
    const response = await app.inject({
      method: 'POST',
      url: '/v3/ingest',
      headers: { 'content-type': 'application/xml', 'x-api-key': `cg_${'a'.repeat(12)}_${'b'.repeat(43)}` },
      payload: v3Fixture('PIX_FEED_REG_Maximal_Request.xml'),
    });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '5');
    const ack = readAck(response.body);
    assert.equal(ack.typeCode, 'AR');
    assert.equal(ack.details[0]?.code, 'INTERR');
  } finally {
    await app.close();
  }
});
