// Issue 26 point 7: NUL characters, unpaired surrogates and instants at the edge of FHIR's range
// reached PostgreSQL and came back as 500s. Each is now a validation error in the origin's own
// format (or, for a search bound past year 9999, the exact answer).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { fhirSurface } from '../../src/fhir/surface.ts';
import { as, createTestUser, signIn, type Signed } from '../admin/support.ts';
import { fhirClient, type FhirClient } from '../fhir/fhir-test-origin.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { buildTestOrigin } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';

let db: TestDatabase;
let admin: FastifyInstance;
let fhir: FastifyInstance;
let site: SiteContext;
let siteAdmin: Signed;
let serviceAdmin: Signed;
let client: FhirClient;
before(async () => {
  db = await createTestDatabase();
  admin = await buildTestOrigin(adminSurface, db.database);
  fhir = await buildTestOrigin(fhirSurface, db.database);
  site = await createTestSite(db.database);
  serviceAdmin = await signIn(admin, (await createTestUser(db.database, null, 'service-admin')).email);
  siteAdmin = await signIn(admin, (await createTestUser(db.database, site, 'site-admin')).email);
  client = await fhirClient(fhir, db.database);
});
after(async () => {
  await admin.close();
  await fhir.close();
  await db.drop();
});

// JSON.stringify writes a lone surrogate as a \ud800 escape, as a hostile client would send it.
const nul = '\u0000';
const surrogate = '\ud800';
const json = (value: unknown) => JSON.stringify(value);

test('admin API: NUL and unpaired surrogates in form fields are 400 naming the field, the unauthenticated sign-in included', async () => {
  const cases: [string, string, (bad: string) => { method: 'POST' | 'PATCH'; url: string; payload: string }][] = [
    ['sign-in', 'email', (bad) => ({ method: 'POST', url: '/api/session', payload: json({ email: `a${bad}@example.test`, password: 'whatever it is' }) })],
    ['site create', 'name', (bad) => ({ method: 'POST', url: '/api/sites', payload: json({ name: `n${bad}`, ae_title: 'AEPROBE' }) })],
    ['site settings', 'name', (bad) => ({ method: 'PATCH', url: `/api/sites/${site.siteId}`, payload: json({ name: `n${bad}` }) })],
    ['user create', 'email', (bad) => ({ method: 'POST', url: `/api/sites/${site.siteId}/users`, payload: json({ email: `u${bad}@example.test`, role: 'clinician', password: 'correct horse battery staple' }) })],
    ['key create', 'label', (bad) => ({ method: 'POST', url: `/api/sites/${site.siteId}/keys`, payload: json({ user_id: siteAdmin.userId, label: `l${bad}` }) })],
    ['client create', 'sending_application', (bad) => ({ method: 'POST', url: `/api/sites/${site.siteId}/clients`, payload: json({ name: 'lab', protocol: 'hl7-mllp', allowed_ips: '10.0.0.1', sending_application: `A${bad}` }) })],
  ];
  for (const [what, field, build] of cases) {
    for (const bad of [nul, surrogate]) {
      const request = build(bad);
      const signed = what === 'site create' ? serviceAdmin : siteAdmin;
      const options = { ...request, headers: { 'content-type': 'application/json' } };
      const response = await admin.inject(what === 'sign-in' ? options : as(signed, options));
      assert.equal(response.statusCode, 400, `${what} ${json(bad)}: ${response.body}`);
      const error = response.json().error;
      assert.equal(error.code, 'invalid');
      assert.deepEqual(error.fields.map((f: { field: string }) => f.field), [field], `${what}: ${response.body}`);
    }
  }
});

test('FHIR: NUL and unpaired surrogates in a resource are 400 OperationOutcomes with the FHIRPath of the element', async () => {
  const cases: [unknown, string][] = [
    [{ resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://loinc.org', code: `1${nul}` }] } }, 'Observation.code.coding[0].code'],
    [{ resourceType: 'Observation', status: 'final', code: { coding: [{ system: 'http://loinc.org', code: `1${surrogate}` }] } }, 'Observation.code.coding[0].code'],
    [{ resourceType: 'Patient', name: [{ family: `D${surrogate}` }] }, 'Patient.name[0].family'],
    [{ resourceType: 'Patient', identifier: [{ system: 'urn:x', value: `V${surrogate}` }] }, 'Patient.identifier[0].value'],
  ];
  for (const [body, expression] of cases) {
    const type = (body as { resourceType: string }).resourceType;
    const response = await client.request('POST', `/fhir/${type}`, { body: json(body) });
    assert.equal(response.statusCode, 400, response.body);
    const outcome = response.json();
    assert.equal(outcome.resourceType, 'OperationOutcome');
    assert.equal(outcome.issue[0].code, 'invalid');
    assert.deepEqual(outcome.issue[0].expression, [expression]);
  }
});

test('FHIR: _lastUpdated bounds past year 9999 or before year 1 (UTC) are searched exactly, not a 500', async () => {
  const created = await client.request('POST', '/fhir/Patient', { body: { resourceType: 'Patient', name: [{ family: 'Edge' }] } });
  assert.equal(created.statusCode, 201, created.body);
  const expectations: [string, number][] = [
    ['gt9999-12-31T23:59:59Z', 0],
    ['9999-12-31', 0],
    ['lt9999', 1],
    ['ge0001-01-01T00:00:00+14:00', 1],
    ['lt0001-01-01T00:00:00+14:00', 0],
  ];
  for (const [value, total] of expectations) {
    const response = await client.request('GET', `/fhir/Patient?_lastUpdated=${encodeURIComponent(value)}&_total=accurate`);
    assert.equal(response.statusCode, 200, `${value}: ${response.body}`);
    assert.equal(response.json().total, total, value);
  }
});
