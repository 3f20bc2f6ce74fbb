// Issue 24 point 5: the Prometheus endpoint of the admin origin, in-process (the whole service and
// its workers: test/server/metrics-cluster.test.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { acceptedEvents } from '../../src/hl7v2/intake/plan.ts';
import { supportedInteractions } from '../../src/hl7v3/message/interactions.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createGatewayMetrics } from '../../src/platform/metrics/gateway-metrics.ts';
import { hl7v2MessageType, hl7v3Interaction, metricHl7v2Types, metricHl7v3Interactions } from '../../src/platform/metrics/hl7-message-types.ts';
import { hl7Surface } from '../../src/server/hl7-origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestApiKey, testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { v3Fixture } from '../hl7v3/support.ts';

const token = 'metrics-token-0123456789abcdef';
let db: TestDatabase;
let origins: Record<'fhir' | 'hl7' | 'admin' | 'guardedAdmin', FastifyInstance>;
before(async () => {
  db = await createTestDatabase();
  const metrics = createGatewayMetrics();
  metrics.watchDatabase(db.database);
  const services = { ...testServices(db.database), metrics };
  const guarded = { ...testServices(db.database, { CG_METRICS_TOKEN: token }), metrics };
  origins = {
    fhir: await createOrigin(fhirSurface, services),
    hl7: await createOrigin(hl7Surface, services),
    admin: await createOrigin(adminSurface, services),
    guardedAdmin: await createOrigin(adminSurface, guarded),
  };
});
after(async () => {
  await Promise.all(Object.values(origins).map((origin) => origin.close()));
  await db.drop();
});

/** The value of one series of the exposition, or undefined when it is not there. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1], match[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const response = await origins.admin.inject({ method: 'GET', url: '/metrics' });
  assert.equal(response.statusCode, 200, response.body);
  assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return response.body;
}

const adt = (type: string, mrn: string, name: string) =>
  [`MSH|^~\\&|LAB|RIVERLAB|GATEWAY|RIVER|20240102030405||${type}|CTRL-${randomUUID()}|P|2.5.1`, `PID|1||${mrn}||${name}||19800101|F`].join('\r');

test('a scrape after traffic: HTTP durations by surface and route pattern, HL7 messages by type and outcome, database pools, process metrics; no data of a site in it', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const before = await scrape();
  const count = (text: string, labels: Record<string, string>) => sample(text, 'cg_http_request_duration_seconds_count', labels) ?? 0;
  const readLabels = { surface: 'fhir', method: 'GET', route: '/fhir/Patient/:id', status_code: '404' };

  for (let i = 0; i < 3; i++) {
    const read = await origins.fhir.inject({ method: 'GET', url: `/fhir/Patient/nobody-${i}`, headers: { 'x-api-key': key } });
    assert.equal(read.statusCode, 404);
  }
  await origins.fhir.inject({ method: 'GET', url: `/nowhere/${randomUUID()}` });
  const hl7 = (payload: string | Buffer, contentType: string, url: string) =>
    origins.hl7.inject({ method: 'POST', url, headers: { 'x-api-key': key, 'content-type': contentType }, payload });
  assert.equal((await hl7(adt('ADT^A01^ADT_A01', 'MRN-SECRET-77', 'Zebulon^Quaxley'), 'x-application/hl7-v2+er7', '/v2/ingest')).statusCode, 200);
  assert.equal((await hl7(adt('ZZZ^Q99', 'MRN-SECRET-78', 'Zebulon^Quaxley'), 'x-application/hl7-v2+er7', '/v2/ingest')).statusCode, 400, 'AR: a type not accepted');
  assert.equal((await hl7(v3Fixture('PIX_FEED_REG_Maximal_Request.xml'), 'application/xml', '/v3/ingest')).statusCode, 200);

  const after = await scrape();
  assert.equal(count(after, readLabels) - count(before, readLabels), 3, 'three reads, labelled by the route pattern');
  assert.ok(count(after, { surface: 'fhir', route: 'unmatched', status_code: '404' }) >= 1, 'a path of no route is "unmatched", not the path');
  assert.equal(sample(after, 'cg_hl7_messages_total', { version: 'v2', transport: 'http', message_type: 'ADT^A01', outcome: 'AA' }), 1);
  assert.equal(sample(after, 'cg_hl7_messages_total', { version: 'v2', transport: 'http', message_type: 'other', outcome: 'AR' }), 1, 'a type not accepted is "other"');
  assert.equal(sample(after, 'cg_hl7_messages_total', { version: 'v3', transport: 'http', message_type: 'PRPA_IN201301UV02', outcome: 'AA' }), 1);
  assert.ok((sample(after, 'cg_db_pool_connections', { pool: 'main' }) ?? 0) >= 1, 'the main pool has connections');
  assert.ok((sample(after, 'cg_db_connection_hold_seconds_count', { pool: 'main' }) ?? 0) > 0, 'connection hold times are observed');
  assert.notEqual(sample(after, 'cg_db_pool_waiting_requests', { pool: 'search' }), undefined);
  assert.match(after, /^process_cpu_user_seconds_total \d/m, 'process metrics');
  assert.match(after, /^nodejs_eventloop_lag_seconds \d/m, 'Node.js metrics');

  for (const secret of [key, key.split('_').slice(0, 2).join('_'), site.siteId, 'MRN-SECRET', 'Zebulon', 'Quaxley', 'CTRL-', 'ZZZ', 'nobody-', '/nowhere/']) {
    assert.ok(!after.includes(secret), `the scrape holds no ${secret}`);
  }
});

test('with CG_METRICS_TOKEN a scrape needs it as a Bearer token; without it, only loopback peers are answered', async () => {
  const guarded = (headers: Record<string, string>) => origins.guardedAdmin.inject({ method: 'GET', url: '/metrics', headers });
  const missing = await guarded({});
  assert.equal(missing.statusCode, 401);
  assert.match(String(missing.headers['www-authenticate']), /^Bearer /);
  for (const wrong of [`Bearer ${token}x`, `Bearer ${token.slice(1)}`, `Basic ${token}`, token, 'Bearer ']) {
    assert.equal((await guarded({ authorization: wrong })).statusCode, 401, wrong);
  }
  const accepted = await guarded({ authorization: `Bearer ${token}` });
  assert.equal(accepted.statusCode, 200);
  assert.match(accepted.body, /^# HELP cg_http_request_duration_seconds /m);
  const remote = await origins.guardedAdmin.inject({ method: 'GET', url: '/metrics', remoteAddress: '192.0.2.10', headers: { authorization: `Bearer ${token}` } });
  assert.equal(remote.statusCode, 200, 'with a token, any address that has it');

  for (const remoteAddress of ['192.0.2.10', '10.0.0.1', '::ffff:192.0.2.10']) {
    const refused = await origins.admin.inject({ method: 'GET', url: '/metrics', remoteAddress });
    assert.equal(refused.statusCode, 403, remoteAddress);
    assert.match(refused.body, /CG_METRICS_TOKEN/);
  }
  for (const remoteAddress of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) {
    assert.equal((await origins.admin.inject({ method: 'GET', url: '/metrics', remoteAddress })).statusCode, 200, remoteAddress);
  }
  assert.equal((await origins.fhir.inject({ method: 'GET', url: '/metrics' })).statusCode, 404, 'only the admin origin serves it');
});

test('CG_METRICS_TOKEN is refused when short or with spaces; only its hash is kept', () => {
  assert.throws(() => testServices(db.database, { CG_METRICS_TOKEN: 'short' }), /CG_METRICS_TOKEN/);
  assert.throws(() => testServices(db.database, { CG_METRICS_TOKEN: 'has a space in it somewhere' }), /CG_METRICS_TOKEN/);
  const { config } = testServices(db.database, { CG_METRICS_TOKEN: token });
  assert.ok(!JSON.stringify(config).includes(token));
});

test('message type labels: the accepted types keep their names, anything else is "other"', () => {
  assert.deepEqual([...metricHl7v2Types].sort(), Object.entries(acceptedEvents).flatMap(([code, events]) => events.map((event) => `${code}^${event}`)).sort());
  assert.deepEqual([...metricHl7v3Interactions].sort(), Object.keys(supportedInteractions).sort());
  assert.equal(hl7v2MessageType('ORU^R01^ORU_R01'), 'ORU^R01');
  assert.equal(hl7v2MessageType('ADT^A99'), 'other');
  assert.equal(hl7v2MessageType(`ADT^A01${'x'.repeat(50)}`), 'other');
  assert.equal(hl7v3Interaction(Buffer.from('<soap:Envelope><soap:Body><hl7:PRPA_IN201302UV02 xmlns:hl7="urn:hl7-org:v3">')), 'PRPA_IN201302UV02');
  assert.equal(hl7v3Interaction(Buffer.from('<PRPA_IN999999UV02>')), 'other');
  assert.equal(hl7v3Interaction(Buffer.from('not xml')), 'other');
});
