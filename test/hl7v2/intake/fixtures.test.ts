// Every public sample message gets its correct answer, and what it stored reads back through the
// record store of the same site.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Observation, Patient } from '@medplum/fhirtypes';
import { listMessages } from '../../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { hl7v2Fixtures } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const expectedAck: Record<string, 'AA' | 'AE'> = {
  'hl7v2/microsoft-FHIR-Converter/ADT-A01-01.hl7': 'AA',
  'hl7v2/microsoft-FHIR-Converter/ADT-A04-01.hl7': 'AA',
  'hl7v2/microsoft-FHIR-Converter/ADT-A08-01.hl7': 'AA',
  'hl7v2/microsoft-FHIR-Converter/ADT-A40-01.hl7': 'AA',
  'hl7v2/microsoft-FHIR-Converter/ADT-A40-02.hl7': 'AA',
  'hl7v2/microsoft-FHIR-Converter/ADT04-251.hl7': 'AA',
  'hl7v2/microsoft-FHIR-Converter/LRI_2.0-NG_CBC_Typ_Message.hl7': 'AA',
  // RP and ED values, an OBX without code or status, and a repeated NM value: nothing is stored.
  'hl7v2/microsoft-FHIR-Converter/ORU-R01-01.hl7': 'AE',
  'hl7v2/microsoft-FHIR-Converter/ORU-R01-RMGEAD.hl7': 'AA',
  'hl7v2/oehf-ipf/A04.hl7': 'AA',
  'hl7v2/oehf-ipf/A08.hl7': 'AA',
  'hl7v2/oehf-ipf/A40.hl7': 'AA',
  // No PID.
  'hl7v2/oehf-ipf/iti8-a01-incomplete.hl7': 'AE',
  'hl7v2/oehf-ipf/iti8-a40-iso-8859-1.hl7': 'AA',
  'hl7v2/oehf-ipf/msg-01-utf8.hl7': 'AA',
  // OBX-5 "100~200~300" for one NM result: which value is the result is not knowable.
  'hl7v2/oehf-ipf/msg-02.hl7': 'AE',
  'hl7v2/oehf-ipf/msg-07.hl7': 'AA',
  'hl7v2/oehf-ipf/msg-08.hl7': 'AA',
  'hl7v2/oehf-ipf/oru-r01-25.hl7': 'AA',
  'hl7v2/LinuxForHealth-hl7v2-fhir-converter/sample_unix.hl7': 'AA',
  'hl7v2/LinuxForHealth-hl7v2-fhir-converter/sample_win.hl7': 'AA',
  'hl7v3/ipf/v2/PIX_FEED_MERGE_Maximal_Request.hl7': 'AA',
  'hl7v3/ipf/v2/PIX_FEED_REG_Maximal_Request.hl7': 'AA',
  'hl7v3/ipf/v2/PIX_FEED_REV_Maximal_Request.hl7': 'AA',
};

test('every fixture has an expected answer', () => {
  assert.deepEqual(hl7v2Fixtures().map((f) => f.name).sort(), Object.keys(expectedAck).sort());
});

for (const { name, bytes } of hl7v2Fixtures()) {
  test(`fixture ${name} is answered ${expectedAck[name]} and logged`, async () => {
    const site = await createTestSite(db.database);
    const outcome = await ingestHl7v2(db.database, { raw: bytes, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
    assert.equal(outcome.ackCode, expectedAck[name], JSON.stringify(outcome.errors));
    assert.match(outcome.ack, new RegExp(`^MSH\\|.*\\rMSA\\|${outcome.ackCode}\\|`));
    assert.equal(outcome.errors.length > 0, outcome.ackCode !== 'AA');
    const log = await listMessages(db.database, site);
    assert.equal(log.messages.length, 1);
    assert.equal(log.messages[0]!.ackCode, outcome.ackCode);
  });
}

async function ingest(name: string) {
  const site = await createTestSite(db.database);
  const bytes = hl7v2Fixtures().find((f) => f.name === name)!.bytes;
  const outcome = await ingestHl7v2(db.database, { raw: bytes, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
  return { site, outcome, store: resourceStore(db.database, site) };
}

test('ADT^A04 (2.3, BOM, no EVN) creates the patient with PID-3 MR as business identifier', async () => {
  const { store } = await ingest('hl7v2/microsoft-FHIR-Converter/ADT04-251.hl7');
  const patient = (await store.findPatientByBusinessIdentifier('MRN12345'))!;
  assert.equal(patient.name![0]!.family, 'Doe');
  assert.deepEqual(patient.name![0]!.given, ['Jane']);
  assert.equal(patient.birthDate, '1978-01-01');
  assert.equal(patient.gender, 'female');
});

test('ADT^A01 with MR identifier second: the MR repetition becomes identifier[0]; names, address, telecom mapped', async () => {
  const { store } = await ingest('hl7v3/ipf/v2/PIX_FEED_REG_Maximal_Request.hl7');
  const patient = (await store.findPatientByBusinessIdentifier('PIX10515W3'))!;
  assert.ok(patient, 'patient resolved by the first identifier (no MR type present)');
  assert.equal(patient.identifier![0]!.system, 'urn:oid:1.3.6.1.4.1.21367.2005.1.1');
  assert.equal(patient.identifier!.length, 3);
  assert.equal(patient.name![0]!.family, 'WASHINGTON');
  assert.deepEqual(patient.name![0]!.given, ['MARY', 'ROSE']);
  assert.equal(patient.name![0]!.use, 'official');
  assert.equal(patient.birthDate, '1977-12-08');
  assert.equal(patient.address![0]!.city, 'CHICAGO');
  assert.ok(patient.telecom!.some((t) => t.system === 'email'));
});

test('UTF-8 and undeclared Latin-1 text arrive as the right characters', async () => {
  const utf8 = await ingest('hl7v2/oehf-ipf/msg-01-utf8.hl7');
  const patient = (await utf8.store.findPatientByBusinessIdentifier('79471'))!;
  assert.equal(patient.name![0]!.family, 'Nächname');
  assert.equal(patient.address![0]!.line![0], 'Blöhplatz 1');
  const latin = await ingest('hl7v2/oehf-ipf/iti8-a40-iso-8859-1.hl7');
  assert.ok(latin.outcome.warnings.some((w) => /ISO 8859-1/.test(w.message)));
  assert.ok(latin.outcome.ack.includes('BLÄH') || latin.outcome.ack.includes('BL\u00c4H'));
});

test('ORU^R01 (LRI CBC) stores 28 laboratory Observations linked to the patient', async () => {
  const { store } = await ingest('hl7v2/microsoft-FHIR-Converter/LRI_2.0-NG_CBC_Typ_Message.hl7');
  const patient = (await store.findPatientByBusinessIdentifier('PATID1234'))!;
  const observations = (await store.listPatientCompartment(patient.id!)) as Observation[];
  assert.equal(observations.length, 28);
  const rbc = observations.find((o) => o.code.coding?.[0]?.code === '26453-1')!;
  assert.equal(rbc.code.coding![0]!.system, 'http://loinc.org');
  assert.equal(rbc.valueQuantity!.value, 4.41);
  assert.equal(rbc.valueQuantity!.code, '10*6/uL');
  assert.equal(rbc.valueQuantity!.system, 'http://unitsofmeasure.org');
  assert.equal(rbc.referenceRange![0]!.low!.value, 4.3);
  assert.equal(rbc.referenceRange![0]!.high!.value, 6.2);
  assert.equal(rbc.status, 'final');
  assert.equal(rbc.effectiveDateTime, '2011-01-03T14:34:28-08:00');
  assert.equal(rbc.subject!.reference, `Patient/${patient.id}`);
  assert.equal(rbc.category![0]!.coding![0]!.code, 'laboratory');
  const coded = observations.find((o) => o.code.coding?.[0]?.code === '38892-6')!;
  assert.equal(coded.valueCodeableConcept!.coding![0]!.system, 'http://snomed.info/sct');
  assert.equal(coded.interpretation![0]!.coding![0]!.code, 'A');
  const text = observations.find((o) => o.code.coding?.[0]?.code === '6742-1')!;
  assert.equal(text.valueString, 'Many spherocytes present.');
});

test('SN values map to quantities (msg-07: ^175 mg/dl, range 70_105, interpretation H)', async () => {
  const { store } = await ingest('hl7v2/oehf-ipf/msg-07.hl7');
  const patient = (await store.findPatientByBusinessIdentifier('010-11-1111'))!;
  const [glucose] = (await store.listPatientCompartment(patient.id!)) as Observation[];
  assert.equal(glucose!.valueQuantity!.value, 175);
  assert.equal(glucose!.valueQuantity!.unit, 'mg/dl');
  assert.equal(glucose!.referenceRange![0]!.low!.value, 70);
  assert.equal(glucose!.interpretation![0]!.coding![0]!.code, 'H');
});

test('AE fixtures store nothing clinical', async () => {
  for (const name of ['hl7v2/oehf-ipf/msg-02.hl7', 'hl7v2/microsoft-FHIR-Converter/ORU-R01-01.hl7']) {
    const { store, outcome } = await ingest(name);
    assert.equal(outcome.ackCode, 'AE');
    assert.equal(await store.findPatientByBusinessIdentifier(name.includes('msg-02') ? 'HL007545P' : '14'), undefined);
  }
});

test('ADT^A40 with two PID/MRG groups merges both pairs', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  for (const [id, family] of [['56789', 'Old'], ['569', 'Older']] as const) {
    const adt = Buffer.from(`MSH|^~\\&|A|B|C|D|20240101||ADT^A04|seed-${id}|P|2.5.1\rPID|1||${id}^^^BCBS^MR||${family}^Pat||20000101|F`);
    assert.equal((await ingestHl7v2(db.database, { raw: adt, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } })).ackCode, 'AA');
  }
  const bytes = hl7v2Fixtures().find((f) => f.name.endsWith('ADT-A40-02.hl7'))!.bytes;
  const outcome = await ingestHl7v2(db.database, { raw: bytes, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http' } });
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(outcome.warnings, []);
  for (const [target, source] of [['12345', '56789'], ['145', '569']]) {
    const survivor = (await store.findPatientByBusinessIdentifier(target)) as Patient;
    assert.ok(survivor.identifier!.some((i) => i.value === source && i.use === 'old'));
    assert.equal(survivor.link![0]!.type, 'replaces');
    assert.equal(await store.findPatientByBusinessIdentifier(source), undefined);
  }
});
