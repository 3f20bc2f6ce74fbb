// Reprocessing through the admin API: a message refused over MLLP for an MSH-4 that no
// integration client names is run again after the client is fixed; its attempts sit beside it,
// the accepted one is stored once, the audit log names who did it, and the idempotency rules hold.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { adminSurface } from '../../src/admin/surface.ts';
import { listAudit } from '../../src/domain/audit/audit.ts';
import { createIntegrationClient, updateIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import { hl7v2Rerun } from '../../src/hl7v2/intake/rerun.ts';
import { ingestHl7v2 } from '../../src/hl7v2/intake/intake.ts';
import { frame } from '../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../src/hl7v2/mllp/listener.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { msa, RawPeer } from '../hl7v2/mllp/support.ts';
import { as, createTestUser, signIn } from './support.ts';

let db: TestDatabase;
let app: FastifyInstance;
let listener: RunningMllpListener;
before(async () => {
  db = await createTestDatabase();
  app = await createOrigin(adminSurface, { ...testServices(db.database), messageRerun: hl7v2Rerun(db.database) });
  listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0 });
});
after(async () => {
  await listener.close();
  await app.close();
  await db.drop();
});

/** Sends one framed message from `localAddress` and returns the ACK's code. */
async function sendOverMllp(localAddress: string, raw: Buffer): Promise<string> {
  const peer = await RawPeer.open(listener.port, localAddress);
  peer.write(frame(raw));
  const answer = await peer.next();
  peer.end();
  return msa(answer).code;
}

async function waitFor<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('not there after 5 s');
}

/** An ADT^A01 as the HTTP intake takes it; returns the ACK code. */
async function sendOverHttp(site: SiteContext, controlId: string, patientId: string): Promise<string> {
  const raw = Buffer.from(`MSH|^~\\&|LAB|HOSP|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|${controlId}|P|2.5.1\rPID|1||${patientId}^^^H^MR||Smith^Ann\r`);
  return (await ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } })).ackCode;
}

let address = 0;
/** A site whose lab client names MSH-4 MAIN, and a message from that lab signed ANNEX: refused. */
async function refusedMessage(controlId: string) {
  const site = await createTestSite(db.database);
  const remoteAddress = `127.0.9.${++address}`;
  const client = await createIntegrationClient(db.database, site.siteId, { name: 'Lab', protocol: 'hl7-mllp', allowedIps: remoteAddress, sendingApplication: 'LAB', sendingFacility: 'MAIN' }, { kind: 'operator' });
  const raw = Buffer.from(`MSH|^~\\&|LAB|ANNEX|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|${controlId}|P|2.5.1\rPID|1||P-${controlId}^^^H^MR||Muller^Jorg\r`);
  const send = () => sendOverMllp(remoteAddress, raw);
  assert.equal(await send(), 'AR');
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  const id = await waitFor(async () => (await app.inject(as(admin, { url: `${S}/messages?outcome=refused&control_id=${controlId}` }))).json().messages[0]?.id as string | undefined);
  return { site, client, admin, S, id, send };
}

test('a message refused for its MSH-4, reprocessed after its client is fixed, is stored once, linked to its attempts, and audited', async () => {
  const { site, client, admin, S, id, send } = await refusedMessage('RP-1');
  const reprocess = () => app.inject(as(admin, { method: 'POST', url: `${S}/messages/${id}/reprocess` }));

  // Not fixed yet: reprocessing is refused by name, nothing is logged.
  const unchanged = await reprocess();
  assert.equal(unchanged.statusCode, 422, unchanged.body);
  assert.match(unchanged.json().error.message, /MSH-4 "ANNEX"/);

  await updateIntegrationClient(db.database, site.siteId, client.id, { sendingFacility: 'ANNEX' }, { kind: 'operator' });
  const fixed = await reprocess();
  assert.equal(fixed.statusCode, 200, fixed.body);
  assert.equal(fixed.json().attempt.ack_code, 'AA');
  assert.equal(fixed.json().attempt.reprocess_of, id);
  assert.equal(fixed.json().original.reprocessed_as, fixed.json().attempt.id);
  const patient = await resourceStore(db.database, site).findPatientByBusinessIdentifier('P-RP-1');
  assert.equal(patient?.name?.[0]?.family, 'Muller');

  const detail = (await app.inject(as(admin, { url: `${S}/messages/${id}` }))).json();
  assert.deepEqual(detail.attempts.map((a: { ack_code: string }) => a.ack_code), ['AA']);
  assert.equal(detail.outcome, 'refused', 'the original keeps the answer it got');

  // Once accepted, neither the original nor the accepted attempt runs again.
  const again = await reprocess();
  assert.equal(again.statusCode, 409);
  assert.match(again.json().error.message, /already reprocessed and accepted/);
  const attempt = await app.inject(as(admin, { method: 'POST', url: `${S}/messages/${fixed.json().attempt.id}/reprocess` }));
  assert.equal(attempt.statusCode, 409);

  // The sender re-sending the control id gets the accepted answer; nothing is applied again.
  assert.equal(await send(), 'AA');
  assert.equal((await app.inject(as(admin, { url: `${S}/messages?control_id=RP-1` }))).json().total, 2);
  const patients = await db.database.query(`SELECT count(*)::int AS n FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient'`, [site.siteId]);
  assert.equal(patients.rows[0].n, 1);

  const audit = await listAudit(db.database, { siteId: site.siteId });
  const entries = audit.filter((event) => event.action === 'message.reprocess');
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.actor, `user:${admin.userId}`);
  assert.equal(entries[0]!.targetId, id);
});

test('a failed (AE) message reprocessed unchanged fails again, beside the original', async () => {
  const site = await createTestSite(db.database);
  assert.equal(await sendOverHttp(site, 'RP-AE', ''), 'AE', 'PID-3 is empty');
  const admin = await signIn(app, (await createTestUser(db.database, site, 'site-admin')).email);
  const S = `/api/sites/${site.siteId}`;
  const id = (await app.inject(as(admin, { url: `${S}/messages?control_id=RP-AE` }))).json().messages[0].id;
  const first = await app.inject(as(admin, { method: 'POST', url: `${S}/messages/${id}/reprocess` }));
  assert.equal(first.statusCode, 200, first.body);
  assert.equal(first.json().attempt.ack_code, 'AE');
  const second = await app.inject(as(admin, { method: 'POST', url: `${S}/messages/${id}/reprocess` }));
  assert.equal(second.json().attempt.ack_code, 'AE');
  const detail = (await app.inject(as(admin, { url: `${S}/messages/${id}` }))).json();
  assert.equal(detail.attempts.length, 2);
  assert.equal(detail.reprocessed_as, null);
});

test('an accepted message is not reprocessed; another site\'s message is not found', async () => {
  const { admin, S, id, site } = await refusedMessage('RP-2');
  assert.equal(await sendOverHttp(site, 'RP-OK', 'OK1'), 'AA');
  const acceptedId = (await app.inject(as(admin, { url: `${S}/messages?control_id=RP-OK` }))).json().messages[0].id;
  const refused = await app.inject(as(admin, { method: 'POST', url: `${S}/messages/${acceptedId}/reprocess` }));
  assert.equal(refused.statusCode, 409);
  assert.match(refused.json().error.message, /was accepted/);

  const other = await refusedMessage('RP-3');
  // Through the other admin's own site, and through this site's URL: both are 404.
  assert.equal((await app.inject(as(other.admin, { method: 'POST', url: `${other.S}/messages/${id}/reprocess` }))).statusCode, 404);
  assert.equal((await app.inject(as(other.admin, { method: 'POST', url: `${S}/messages/${id}/reprocess` }))).statusCode, 404);
  assert.equal((await app.inject(as(other.admin, { url: `${other.S}/messages/${id}` }))).statusCode, 404);
  // A clinician of the site may not reprocess.
  const clinician = await signIn(app, (await createTestUser(db.database, site, 'clinician')).email);
  assert.equal((await app.inject(as(clinician, { method: 'POST', url: `${S}/messages/${id}/reprocess` }))).statusCode, 403);
});

test('message search over the API: filters, a total, bad parameters answered 400', async () => {
  const { admin, S } = await refusedMessage('RP-4');
  const page = (await app.inject(as(admin, { url: `${S}/messages?outcome=refused&transport=mllp&sender=ANNEX&sort=oldest&from=2020-01-01T00:00:00Z&patient=P-RP-4` }))).json();
  assert.equal(page.total, 1);
  assert.equal(page.total_exact, true);
  assert.equal(page.messages[0].patient_identifier, 'P-RP-4');
  assert.equal((await app.inject(as(admin, { url: `${S}/messages?outcome=AR` }))).json().total, 0, 'AR is a rejected message; refused is its own outcome');
  for (const bad of ['outcome=XX', 'from=yesterday', 'sort=up', 'limit=0', 'transport=ftp', 'nope=1', `type=${'x'.repeat(201)}`]) {
    const response = await app.inject(as(admin, { url: `${S}/messages?${bad}` }));
    assert.equal(response.statusCode, 400, bad);
    assert.doesNotMatch(response.body, /at .*\.ts:/);
  }
});
