// Times without a UTC offset (OBX-14, OBR-7, OBX-5 TS, PV1-44) are read in the sender's time zone:
// the integration client's over MLLP, else the site's (HL7 v2.5.1 2.A.22: a DTM without an offset
// is the sender's local time). With no zone configured they are read as UTC, with a warning.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { DocumentReference, Observation } from '@medplum/fhirtypes';
import { createIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { listVisits } from '../../src/domain/patients/visits.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { ingestHl7v2 } from '../../src/hl7v2/intake/intake.ts';
import { frame } from '../../src/hl7v2/mllp/frame-scanner.ts';
import { startMllpListener, type RunningMllpListener } from '../../src/hl7v2/mllp/listener.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';
import { msa, RawPeer } from './mllp/support.ts';
import { message } from './support.ts';

let db: TestDatabase;
let listener: RunningMllpListener;
before(async () => {
  db = await createTestDatabase();
  listener = await startMllpListener(testServices(db.database), { host: '127.0.0.1', port: 0, maxFrameBytes: 64 * 1024 });
});
after(async () => {
  await listener.close();
  await db.drop();
});

const overHttp = (site: SiteContext, raw: Buffer) =>
  ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http', remoteAddress: '127.0.0.1' } });

const oru = (patientId: string, segments: string[]) => message([`PID|1||${patientId}^^^H^MR||Time^Zone`, ...segments], { type: 'ORU^R01^ORU_R01' });

async function observations(site: SiteContext, patientId: string): Promise<Map<string, Observation>> {
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier(patientId))!;
  const all = (await store.listPatientCompartment(patient.id!)).filter((r): r is Observation => r.resourceType === 'Observation');
  return new Map(all.map((o) => [o.code.coding![0]!.code!, o]));
}

const timeWarning = /without a UTC offset were read as UTC/;

test('a London site: summer and winter results carry the offset in force, not UTC', async () => {
  const site = await createTestSite(db.database, { timeZone: 'Europe/London' });
  const outcome = await overHttp(
    site,
    oru('LDN1', [
      'OBR|1||ORD-LDN1||||20260701080000',
      'OBX|1|NM|1-1^Summer^LN||5|mmol/L|||||F|||20260701093000',
      'OBX|2|NM|1-2^Winter^LN||6|mmol/L|||||F|||20260115093000',
      'OBX|3|NM|1-3^From OBR-7^LN||7|mmol/L|||||F',
      'OBX|4|NM|1-4^Minutes only^LN||8|mmol/L|||||F|||202607011415',
      'OBX|5|NM|1-5^Own offset^LN||9|mmol/L|||||F|||20260701093000-0500',
      'OBX|6|NM|1-6^Date only^LN||10|mmol/L|||||F|||20260701',
      'OBX|7|TS|1-7^Collected^LN||20260701071500||||||F',
    ]),
  );
  assert.equal(outcome.ackCode, 'AA', JSON.stringify(outcome.errors));
  assert.doesNotMatch(JSON.stringify(outcome.warnings), timeWarning);
  const found = await observations(site, 'LDN1');
  assert.equal(found.get('1-1')!.effectiveDateTime, '2026-07-01T09:30:00+01:00');
  assert.equal(found.get('1-2')!.effectiveDateTime, '2026-01-15T09:30:00+00:00');
  assert.equal(found.get('1-3')!.effectiveDateTime, '2026-07-01T08:00:00+01:00');
  assert.equal(found.get('1-4')!.effectiveDateTime, '2026-07-01T14:15:00+01:00');
  // An explicit offset is the sender's word and is kept as given.
  assert.equal(found.get('1-5')!.effectiveDateTime, '2026-07-01T09:30:00-05:00');
  // A date is a date: no zone is invented for it.
  assert.equal(found.get('1-6')!.effectiveDateTime, '2026-07-01');
  assert.equal(found.get('1-7')!.valueDateTime, '2026-07-01T07:15:00+01:00');
  assert.equal(new Date(found.get('1-1')!.effectiveDateTime!).toISOString(), '2026-07-01T08:30:00.000Z');
});

test('daylight saving edges: a fall-back overlap takes the earlier instant, a spring-forward gap moves forward', async () => {
  const site = await createTestSite(db.database, { timeZone: 'America/New_York' });
  const outcome = await overHttp(
    site,
    oru('NY1', [
      'OBR|1||ORD-NY1',
      // 2026-11-01 01:30 happens twice in New York (EDT, then EST): the earlier is EDT.
      'OBX|1|NM|2-1^Overlap^LN||1||||||F|||20261101013000',
      // 2026-03-08 02:30 never happens (02:00 EST became 03:00 EDT): it is 03:30 EDT.
      'OBX|2|NM|2-2^Gap^LN||2||||||F|||20260308023000',
      'OBX|3|NM|2-3^After gap^LN||3||||||F|||20260308033000',
    ]),
  );
  assert.equal(outcome.ackCode, 'AA', JSON.stringify(outcome.errors));
  const found = await observations(site, 'NY1');
  assert.equal(found.get('2-1')!.effectiveDateTime, '2026-11-01T01:30:00-04:00');
  assert.equal(found.get('2-2')!.effectiveDateTime, '2026-03-08T03:30:00-04:00');
  assert.equal(found.get('2-3')!.effectiveDateTime, '2026-03-08T03:30:00-04:00');
});

test('the admit time (PV1-44) and a document date are read in the site zone too', async () => {
  const site = await createTestSite(db.database, { timeZone: 'America/Chicago' });
  const outcome = await overHttp(
    site,
    oru('CHI1', ['PV1|1|I|W1^101^A||||||||||||||||V-CHI1|||||||||||||||||||||||||20260210220000', 'OBR|1||ORD-CHI1', 'OBX|1|ED|3-1^Report^LN||^TEXT^PLAIN^A^hello||||||F|||20260211061500']),
  );
  assert.equal(outcome.ackCode, 'AA', JSON.stringify(outcome.errors));
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('CHI1'))!;
  const [visit] = await listVisits(db.database, site, patient.id!);
  assert.equal(visit!.admitTime, '2026-02-10T22:00:00-06:00');
  const document = (await store.listPatientCompartment(patient.id!)).find((r): r is DocumentReference => r.resourceType === 'DocumentReference')!;
  assert.equal(document.date, '2026-02-11T06:15:00-06:00');
});

test('with no zone configured, times are read as UTC and the ACK still says so', async () => {
  const site = await createTestSite(db.database);
  const outcome = await overHttp(site, oru('UTC1', ['OBR|1||ORD-UTC1', 'OBX|1|NM|4-1^Glucose^LN||5||||||F|||20260701093000']));
  assert.equal(outcome.ackCode, 'AA');
  assert.match(JSON.stringify(outcome.warnings), timeWarning);
  assert.equal((await observations(site, 'UTC1')).get('4-1')!.effectiveDateTime, '2026-07-01T09:30:00Z');
});

test('an explicit UTC zone reads times as UTC without the warning', async () => {
  const site = await createTestSite(db.database, { timeZone: 'UTC' });
  const outcome = await overHttp(site, oru('UTC2', ['OBR|1||ORD-UTC2', 'OBX|1|NM|5-1^Glucose^LN||5||||||F|||20260701093000']));
  assert.equal(outcome.ackCode, 'AA');
  assert.doesNotMatch(JSON.stringify(outcome.warnings), timeWarning);
  assert.equal(new Date((await observations(site, 'UTC2')).get('5-1')!.effectiveDateTime!).toISOString(), '2026-07-01T09:30:00.000Z');
});

test('over MLLP the integration client\'s zone overrides the site\'s; a client without one uses the site\'s', async () => {
  const site = await createTestSite(db.database, { timeZone: 'Europe/London' });
  await createIntegrationClient(db.database, site.siteId, { name: 'us-lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.3', sendingApplication: 'US-LAB', timeZone: 'America/Los_Angeles' }, { kind: 'operator' });
  await createIntegrationClient(db.database, site.siteId, { name: 'uk-lab', protocol: 'hl7-mllp', allowedIps: '127.0.0.3', sendingApplication: 'UK-LAB' }, { kind: 'operator' });
  const peer = await RawPeer.open(listener.port, '127.0.0.3');
  try {
    for (const [application, patientId] of [['US-LAB', 'MLLP-US'], ['UK-LAB', 'MLLP-UK']] as const) {
      const raw = `MSH|^~\\&|${application}|LAB|GW|GW|20260701093000||ORU^R01^ORU_R01|${patientId}|P|2.5.1\rPID|1||${patientId}^^^H^MR||Time^Zone\rOBR|1||ORD-${patientId}\rOBX|1|NM|6-1^Glucose^LN||5||||||F|||20260701093000`;
      peer.write(frame(Buffer.from(raw, 'utf8')));
      assert.deepEqual(msa(await peer.next()), { code: 'AA', controlId: patientId });
    }
  } finally {
    peer.end();
  }
  assert.equal((await observations(site, 'MLLP-US')).get('6-1')!.effectiveDateTime, '2026-07-01T09:30:00-07:00');
  assert.equal((await observations(site, 'MLLP-UK')).get('6-1')!.effectiveDateTime, '2026-07-01T09:30:00+01:00');
});
