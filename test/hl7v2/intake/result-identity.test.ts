// A result's identity is its observation (the order, OBX-3 and OBX-4), never its position
// (OBX-1): HL7 v2.5.1 section 7.4.2.4. The messages are written for these tests, in the shapes
// microbiology and susceptibility feeds send.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Observation } from '@medplum/fhirtypes';
import { listMessages } from '../../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const send = (site: SiteContext, raw: Buffer) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http', remoteAddress: '127.0.0.1' } });
const oru = (segments: string[], controlId?: string) => message(segments, { type: 'ORU^R01^ORU_R01', ...(controlId ? { controlId } : {}) });

async function resultsOf(site: SiteContext, mrn: string): Promise<Observation[]> {
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier(mrn))!;
  return (await store.listPatientCompartment(patient.id!)) as Observation[];
}

const summary = (observations: Observation[]) =>
  observations.map((o) => `${o.code.coding?.[0]?.code ?? o.code.text}=${o.valueString ?? o.valueCodeableConcept?.text ?? o.valueQuantity?.value} v${o.meta?.versionId}`);

test('three OBX of a stool culture sharing set id and sub-id but not OBX-3 are three Observations', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(
    site,
    oru([
      'PID|1||STOOL1^^^H^MR||Stool^Sam',
      'OBR|1|PL-100|FL-100^LAB|625-4^Bacteria identified in Stool by Culture^LN|||20240301080000+0000',
      'OBX|1|CWE|20951-0^Campylobacter sp identified in Stool by Organism specific culture^LN|1|260373001^Isolated^SCT||||||F',
      'OBX|1|CWE|17576-0^Salmonella sp identified in Stool by Organism specific culture^LN|1|260373001^Isolated^SCT||||||F',
      'OBX|1|CWE|20955-1^Shigella sp identified in Stool by Organism specific culture^LN|1|260415000^Not Isolated^SCT||||||F',
    ]),
  );
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(outcome.warnings, []);
  assert.deepEqual(summary(await resultsOf(site, 'STOOL1')), ['20951-0=Isolated v1', '17576-0=Isolated v1', '20955-1=Not Isolated v1']);
});

test('a later report that inserts a susceptibility before the others updates each by its code', async () => {
  const site = await createTestSite(db.database);
  const pid = 'PID|1||SUSC1^^^H^MR||Culture^Carla';
  const obr = 'OBR|1|PL-200|FL-200^LAB|29576-6^Bacterial susceptibility panel^LN|||20240302080000+0000';
  assert.equal((await send(site, oru([pid, obr, 'OBX|1|ST|35789-1^Daptomycin [Susceptibility]^LN|1|S||||||P', 'OBX|2|ST|19000-9^Vancomycin [Susceptibility]^LN|1|S||||||P']))).ackCode, 'AA');
  const before = await resultsOf(site, 'SUSC1');
  const later = await send(
    site,
    oru([pid, obr, 'OBX|1|ST|7016-3^Ciprofloxacin [Susceptibility]^LN|1|R||||||F', 'OBX|2|ST|35789-1^Daptomycin [Susceptibility]^LN|1|S||||||F', 'OBX|3|ST|19000-9^Vancomycin [Susceptibility]^LN|1|S||||||F']),
  );
  assert.equal(later.ackCode, 'AA');
  const after = await resultsOf(site, 'SUSC1');
  assert.deepEqual(summary(after), ['35789-1=S v2', '19000-9=S v2', '7016-3=R v1']);
  assert.deepEqual(after.slice(0, 2).map((o) => o.id), before.map((o) => o.id));
  assert.deepEqual(after.map((o) => o.status), ['final', 'final', 'final']);
});

test('a correction (OBX-11 C) updates its observation in place, wherever in the report it comes', async () => {
  const site = await createTestSite(db.database);
  const pid = 'PID|1||CORR1^^^H^MR||Correct^Cora';
  const obr = 'OBR|1|PL-300|FL-300^LAB|24323-8^Comprehensive metabolic panel^LN|||20240303080000+0000';
  await send(site, oru([pid, obr, 'OBX|1|NM|2345-7^Glucose^LN||90|mg/dL^^UCUM|70-99|N|||F', 'OBX|2|NM|2160-0^Creatinine^LN||1.0|mg/dL^^UCUM|||||F']));
  const [glucose] = await resultsOf(site, 'CORR1');
  // The corrected glucose alone, at another set id.
  assert.equal((await send(site, oru([pid, obr, 'OBX|7|NM|2345-7^Glucose^LN||140|mg/dL^^UCUM|70-99|H|||C']))).ackCode, 'AA');
  const after = await resultsOf(site, 'CORR1');
  assert.deepEqual(summary(after), ['2345-7=140 v2', '2160-0=1 v1']);
  assert.equal(after[0]!.id, glucose!.id);
  assert.equal(after[0]!.status, 'corrected');
});

test('OBX repeating OBX-3 and OBX-4 in one OBR are told apart by value type, then order, across a first and a fuller report', async () => {
  const site = await createTestSite(db.database);
  const pid = 'PID|1||ISO1^^^H^MR||Isolate^Ida';
  const obr = 'OBR|1|PL-400|FL-400^LAB|600-7^Bacteria identified in Blood by Culture^LN|||20240304080000+0000';
  const organism = (status: string) => `OBX|2|CE|ISOLATE^Isolate^L|1|3092008^Staphylococcus aureus^SCT||||||${status}`;
  const first = await send(site, oru([pid, obr, 'OBX|1|CE|ISOLATE^Isolate^L|1|3092008^Staphylococcus aureus^SCT||||||P']));
  assert.equal(first.ackCode, 'AA');
  const [preliminary] = await resultsOf(site, 'ISO1');

  const fuller = oru([pid, obr, 'OBX|1|ST|ISOLATE^Isolate^L|1|>100,000 CFU/mL||||||F', organism('F')], 'ISO-FULL');
  const answer = await send(site, fuller);
  assert.equal(answer.ackCode, 'AA');
  assert.deepEqual(answer.warnings.map((w) => [w.code, w.location]), [[205, 'OBX[1]']]);
  assert.match(answer.warnings[0]!.message, /2 OBX of order FL-400\^LAB \(HOSP\) share observation identifier L\^ISOLATE and sub-id "1"/);
  let after = await resultsOf(site, 'ISO1');
  assert.deepEqual(summary(after), ['ISOLATE=Staphylococcus aureus v2', 'ISOLATE=>100,000 CFU/mL v1']);
  assert.equal(after[0]!.id, preliminary!.id);
  assert.equal(after[0]!.status, 'final');

  // The same control id again: the original answer, nothing changed.
  const resent = await send(site, fuller);
  assert.equal(resent.duplicate, true);
  assert.equal(resent.ack, answer.ack);
  // The same report under a new control id: each finds its own again.
  assert.equal((await send(site, oru([pid, obr, 'OBX|1|ST|ISOLATE^Isolate^L|1|>100,000 CFU/mL||||||F', organism('F')]))).ackCode, 'AA');
  // A correction of the organism alone finds the organism, not the count.
  assert.equal((await send(site, oru([pid, obr, 'OBX|1|CE|ISOLATE^Isolate^L|1|3092008^Staphylococcus aureus (MRSA)^SCT||||||C']))).ackCode, 'AA');
  after = await resultsOf(site, 'ISO1');
  assert.deepEqual(summary(after), ['ISOLATE=Staphylococcus aureus (MRSA) v3', 'ISOLATE=>100,000 CFU/mL v1']);
  assert.equal((await listMessages(db.database, site)).messages.length, 4);
});

test('OBR groups keep their results apart, also two groups of one order number', async () => {
  const site = await createTestSite(db.database);
  const report = (cipro: string) =>
    oru([
      'PID|1||GRP1^^^H^MR||Group^Gus',
      'OBR|1|PL-500|FL-500^LAB|87040^Blood culture^C4|||20240305080000+0000',
      'OBX|1|CE|600-7^Bacteria identified^LN|1|112283007^Escherichia coli^SCT||||||F',
      'OBX|2|CE|600-7^Bacteria identified^LN|2|3092008^Staphylococcus aureus^SCT||||||F',
      // Susceptibility panels of each isolate, sent as child orders under the same filler number
      // (OBR-26 names the parent isolate: OBX-3 and OBX-4).
      'OBR|2|PL-500|FL-500^LAB|29576-6^Susceptibility^LN|||20240305080000+0000|||||||||||||||||||600-7&Bacteria identified&LN^1',
      `OBX|1|ST|7016-3^Ciprofloxacin^LN||${cipro}||||||F`,
      'OBR|3|PL-500|FL-500^LAB|29576-6^Susceptibility^LN|||20240305080000+0000|||||||||||||||||||600-7&Bacteria identified&LN^2',
      'OBX|1|ST|7016-3^Ciprofloxacin^LN||S||||||F',
      'OBR|4|PL-501|FL-501^LAB|2345-7^Glucose^LN|||20240305080000+0000',
      'OBX|1|ST|7016-3^Ciprofloxacin^LN||not a susceptibility, another order||||||F',
    ]);
  const first = await send(site, report('R'));
  assert.equal(first.ackCode, 'AA');
  assert.equal(first.warnings.length, 1);
  assert.deepEqual(summary(await resultsOf(site, 'GRP1')), [
    '600-7=Escherichia coli v1',
    '600-7=Staphylococcus aureus v1',
    '7016-3=R v1',
    '7016-3=S v1',
    '7016-3=not a susceptibility, another order v1',
  ]);
  assert.equal((await send(site, report('I'))).ackCode, 'AA');
  assert.deepEqual(summary(await resultsOf(site, 'GRP1')), [
    '600-7=Escherichia coli v1',
    '600-7=Staphylococcus aureus v1',
    '7016-3=I v2',
    '7016-3=S v1',
    '7016-3=not a susceptibility, another order v1',
  ]);
});

test('an OBR without an order number is accepted with a warning; its results are identified by code and time', async () => {
  const site = await createTestSite(db.database);
  const raw = () => oru(['PID|1||NOORD1^^^H^MR', 'OBR|1|||2345-7^Glucose^LN|||20240306080000+0000', 'OBX|1|NM|2345-7^Glucose^LN||5.5|mmol/L|||||F']);
  const outcome = await send(site, raw());
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(outcome.warnings.map((w) => [w.code, w.location]), [[101, 'OBR[1]-3']]);
  assert.equal((await send(site, raw())).ackCode, 'AA');
  assert.deepEqual(summary(await resultsOf(site, 'NOORD1')), ['2345-7=5.5 v1']);
});

test('concurrent reports of one order, repeating an identity, store each result once', async () => {
  const site = await createTestSite(db.database);
  const report = (count: string) =>
    oru([
      'PID|1||RACE2^^^H^MR',
      'OBR|1|PL-900|FL-900^LAB|600-7^Blood culture^LN|||20240310080000+0000',
      `OBX|1|ST|ISOLATE^Isolate^L|1|${count}||||||P`,
      'OBX|2|CE|ISOLATE^Isolate^L|1|3092008^Staphylococcus aureus^SCT||||||P',
      'OBX|3|ST|7016-3^Ciprofloxacin^LN|1|S||||||P',
    ]);
  const outcomes = await Promise.all(['10 CFU/mL', '20 CFU/mL', '30 CFU/mL', '40 CFU/mL', '50 CFU/mL', '60 CFU/mL'].map((count) => send(site, report(count))));
  assert.ok(outcomes.every((outcome) => outcome.ackCode === 'AA'));
  const stored = await resultsOf(site, 'RACE2');
  assert.deepEqual(stored.map((o) => o.code.coding![0]!.code).sort(), ['7016-3', 'ISOLATE', 'ISOLATE']);
  assert.equal(stored.filter((o) => o.valueString !== undefined && o.code.coding![0]!.code === 'ISOLATE').length, 1);
});
