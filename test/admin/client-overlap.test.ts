// Issue 26 point 1: one site's administrator cannot take another site's MLLP feed, nor have its
// sender refused, by registering an overlapping integration client.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authorizeSender } from '../../src/hl7v2/mllp/authorize.ts';
import { createTestSite } from '../support/sites.ts';
import { adminOriginForFile, as, createTestUser, signIn } from './support.ts';

const origin = adminOriginForFile();

async function siteWithAdmin(name: string) {
  const site = await createTestSite(origin.db.database, { name: `${name} ${Math.random().toString(36).slice(2, 8)}` });
  const admin = await signIn(origin.app, (await createTestUser(origin.db.database, site, 'site-admin')).email);
  return { site, admin, clients: `/api/sites/${site.siteId}/clients` };
}

test('the "any IP" policy is the service administrator\'s: a site administrator cannot switch it on', async () => {
  const b = await siteWithAdmin('Site B');
  const refused = await origin.app.inject(as(b.admin, { method: 'PATCH', url: `/api/sites/${b.site.siteId}`, payload: { mllp_allow_any_ip: true } }));
  assert.equal(refused.statusCode, 403);
  // The site's form resends the current value with its other settings: that is not a change.
  const unchanged = await origin.app.inject(as(b.admin, { method: 'PATCH', url: `/api/sites/${b.site.siteId}`, payload: { patient_put_creates: true, mllp_allow_any_ip: false } }));
  assert.equal(unchanged.statusCode, 200, unchanged.body);
  const byService = await origin.app.inject(as(origin.service, { method: 'PATCH', url: `/api/sites/${b.site.siteId}`, payload: { mllp_allow_any_ip: true } }));
  assert.equal(byService.statusCode, 200);
  assert.equal(byService.json().mllp_allow_any_ip, true);
});

test('a registration that could match another site\'s sender is refused without naming that site', async () => {
  const a = await siteWithAdmin('Site A');
  const b = await siteWithAdmin('Site B');
  await origin.app.inject(as(origin.service, { method: 'PATCH', url: `/api/sites/${b.site.siteId}`, payload: { mllp_allow_any_ip: true } }));
  const ownA = await origin.app.inject(as(a.admin, { method: 'POST', url: a.clients, payload: { name: 'ADT feed', allowed_ips: ['198.18.1.7'], sending_application: 'EPIC', sending_facility: 'NORTH' } }));
  assert.equal(ownA.statusCode, 201, ownA.body);
  const attempts = [
    { allowed_ips: ['*'], sending_application: 'EPIC', sending_facility: 'NORTH' },
    { allowed_ips: ['198.18.0.0/16'], sending_application: 'EPIC', sending_facility: null },
    { allowed_ips: ['198.18.1.7'] },
    { allowed_ips: ['::ffff:198.18.1.7'], sending_application: 'EPIC' },
  ];
  for (const [index, payload] of attempts.entries()) {
    const response = await origin.app.inject(as(b.admin, { method: 'POST', url: b.clients, payload: { name: `takeover ${index}`, ...payload } }));
    assert.equal(response.statusCode, 409, JSON.stringify(payload));
    const error = response.json().error;
    assert.equal(error.fields[0].field, 'allowed_ips');
    assert.match(error.message, /another site/);
    assert.doesNotMatch(response.body, new RegExp(a.site.siteName));
    assert.doesNotMatch(response.body, new RegExp(a.site.siteId));
  }
  // Told apart by MSH-4, or by address, the same sender system may feed both sites.
  const otherFacility = await origin.app.inject(as(b.admin, { method: 'POST', url: b.clients, payload: { name: 'south', allowed_ips: ['198.18.1.7'], sending_application: 'EPIC', sending_facility: 'SOUTH' } }));
  assert.equal(otherFacility.statusCode, 201, otherFacility.body);
  const otherAddress = await origin.app.inject(as(b.admin, { method: 'POST', url: b.clients, payload: { name: 'elsewhere', allowed_ips: ['198.18.2.0/24'] } }));
  assert.equal(otherAddress.statusCode, 201, otherAddress.body);
  // Widening an existing client into the other site's traffic is refused the same way.
  const widened = await origin.app.inject(as(b.admin, { method: 'PATCH', url: `${b.clients}/${otherAddress.json().id}`, payload: { allowed_ips: ['198.18.0.0/16'] } }));
  assert.equal(widened.statusCode, 409);
  const renamed = await origin.app.inject(as(b.admin, { method: 'PATCH', url: `${b.clients}/${otherAddress.json().id}`, payload: { name: 'still elsewhere' } }));
  assert.equal(renamed.statusCode, 200);
});

test('only a service administrator approves an overlap, and then neither site\'s entry overrides the other\'s', async () => {
  const a = await siteWithAdmin('Site A');
  const b = await siteWithAdmin('Site B');
  const byIpOnly = await origin.app.inject(as(a.admin, { method: 'POST', url: a.clients, payload: { name: 'ADT by address', allowed_ips: ['198.18.9.9'] } }));
  assert.equal(byIpOnly.statusCode, 201);
  const specific = { name: 'more specific', allowed_ips: ['198.18.9.9'], sending_application: 'ADT', sending_facility: 'HOSP', approve_overlap: true };
  const selfApproved = await origin.app.inject(as(b.admin, { method: 'POST', url: b.clients, payload: specific }));
  assert.equal(selfApproved.statusCode, 403);
  const approved = await origin.app.inject(as(origin.service, { method: 'POST', url: b.clients, payload: specific }));
  assert.equal(approved.statusCode, 201, approved.body);
  const { rows } = await origin.db.database.query(`SELECT 1 FROM audit_event WHERE action = 'integration-client.overlap-approved' AND target_id = $1`, [approved.json().id]);
  assert.equal(rows.length, 1);
  // Site A's sender, which B's more specific entry also matches, is not given to site B.
  const decision = await authorizeSender(origin.db.database, '198.18.9.9', 'ADT', 'HOSP');
  assert.equal(decision.kind, 'refused');
  assert.doesNotMatch(JSON.stringify(decision), new RegExp(a.site.siteName));
  // Traffic only site A's entry matches still reaches site A.
  const own = await authorizeSender(origin.db.database, '198.18.9.9', 'ADT', 'OTHER');
  assert.equal(own.kind === 'authorized' ? own.site.id : own.kind, a.site.siteId);
});
