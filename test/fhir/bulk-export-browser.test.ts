// Issue 22 points 4 and 5: a browser (SMART-style) Bulk Data client on a configured origin reads
// every header the IG has it read, and a body-less request labelled JSON is not a parse error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fhirClient, patientBody } from './fhir-test-origin.ts';
import { asyncHeaders, pathOf, useExportOrigin } from './bulk-export-support.ts';

const appOrigin = 'https://smart-app.example.org';
const origin = useExportOrigin({ CG_FHIR_CORS_ORIGINS: appOrigin });

function exposed(headers: Record<string, unknown>): string[] {
  return String(headers['access-control-expose-headers'] ?? '').toLowerCase().split(/\s*,\s*/);
}

test('CORS exposes what a Bulk Data client reads: Content-Location, X-Progress, Retry-After, Expires, and ETag, Location, Last-Modified', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  const created = await client.request('POST', '/fhir/Patient', { body: patientBody('CORS-X1'), headers: { origin: appOrigin } });
  assert.equal(created.statusCode, 201);
  assert.equal(created.headers['access-control-allow-origin'], appOrigin);
  for (const name of ['location', 'etag', 'last-modified']) {
    assert.ok(created.headers[name], name);
    assert.ok(exposed(created.headers).includes(name), name);
  }

  const kick = await client.request('GET', '/fhir/$export', { headers: { ...asyncHeaders, origin: appOrigin } });
  assert.equal(kick.statusCode, 202, kick.body);
  assert.equal(kick.headers['access-control-allow-origin'], appOrigin);
  assert.ok(kick.headers['content-location']);
  assert.ok(exposed(kick.headers).includes('content-location'));
  const status = pathOf(kick.headers['content-location'] as string);

  const pending = await client.request('GET', status, { headers: { origin: appOrigin } });
  assert.equal(pending.statusCode, 202);
  assert.ok(pending.headers['x-progress']);
  assert.ok(pending.headers['retry-after']);
  for (const name of ['x-progress', 'retry-after']) assert.ok(exposed(pending.headers).includes(name), name);

  await origin.runPendingExports();
  const done = await client.request('GET', status, { headers: { origin: appOrigin } });
  assert.equal(done.statusCode, 200, done.body);
  assert.ok(done.headers.expires);
  assert.ok(exposed(done.headers).includes('expires'));

  // The browser asks before it cancels: DELETE is an allowed method for the app's origin.
  const preflight = await origin.app.inject({
    method: 'OPTIONS',
    url: status,
    headers: { origin: appOrigin, 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'x-api-key, content-type' },
  });
  assert.equal(preflight.statusCode, 204);
  assert.match(String(preflight.headers['access-control-allow-methods']), /DELETE/);

  const unauthenticated = await origin.app.inject({ method: 'GET', url: '/fhir/Patient', headers: { origin: appOrigin } });
  assert.equal(unauthenticated.statusCode, 401);
  assert.ok(exposed(unauthenticated.headers).includes('www-authenticate'));
});

test('an empty body labelled application/fhir+json or application/json is no body on DELETE and GET; on POST and PUT it stays a 400', async () => {
  const client = await fhirClient(origin.app, origin.db.database);
  const patient = (await client.request('POST', '/fhir/Patient', { body: patientBody('EMPTY-1') })).json();
  for (const contentType of ['application/fhir+json', 'application/json', 'application/fhir+json; charset=utf-8']) {
    const kick = await client.request('GET', '/fhir/$export', { headers: { ...asyncHeaders, 'content-type': contentType } });
    assert.equal(kick.statusCode, 202, `${contentType}: ${kick.body}`);
    const cancelled = await client.request('DELETE', pathOf(kick.headers['content-location'] as string), { headers: { 'content-type': contentType } });
    assert.equal(cancelled.statusCode, 202, `${contentType}: ${cancelled.body}`);

    const read = await client.request('GET', `/fhir/Patient/${patient.id}`, { headers: { 'content-type': contentType } });
    assert.equal(read.statusCode, 200, `${contentType}: ${read.body}`);
    const deleted = await client.request('DELETE', `/fhir/Patient/${patient.id}`, { headers: { 'content-type': contentType } });
    assert.equal(deleted.statusCode, 405, `${contentType}: a delete is refused as a method, not as a body: ${deleted.body}`);

    for (const method of ['POST', 'PUT']) {
      const url = method === 'POST' ? '/fhir/Patient' : `/fhir/Patient/${patient.id}`;
      const empty = await client.request(method, url, { headers: { 'content-type': contentType } });
      assert.equal(empty.statusCode, 400, `${method} ${contentType}: ${empty.body}`);
      assert.equal(empty.json().resourceType, 'OperationOutcome');
    }
  }
});
