// The intake's rules: idempotency, all-or-nothing, merge, corrected results, refusals, and
// "retry later" when the database is away.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Condition, DocumentReference, Observation, Patient } from '@medplum/fhirtypes';
import { listMessages } from '../../../src/domain/messages/message-log.ts';
import { listVisits } from '../../../src/domain/patients/visits.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { Database } from '../../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const send = (site: SiteContext, raw: Buffer, database: Database = db.database) =>
  ingestHl7v2(database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http', remoteAddress: '127.0.0.1' } });

test('a re-sent control id gets the original ACK and changes nothing', async () => {
  const site = await createTestSite(db.database);
  const first = await send(site, message(['PID|1||P1^^^H^MR||First^Name'], { controlId: 'DUP-1' }));
  assert.equal(first.ackCode, 'AA');
  const again = await send(site, message(['PID|1||P1^^^H^MR||Changed^Name'], { controlId: 'DUP-1' }));
  assert.equal(again.duplicate, true);
  assert.equal(again.ack, first.ack);
  const patient = (await resourceStore(db.database, site).findPatientByBusinessIdentifier('P1'))!;
  assert.equal(patient.name![0]!.family, 'First');
  assert.equal(patient.meta!.versionId, '1');
  assert.equal((await listMessages(db.database, site)).messages.length, 1);
  // The same control id from another sender is another message.
  const other = await send(site, message(['PID|1||P1^^^H^MR||Other^Name'], { controlId: 'DUP-1', sender: 'OTHERLAB' }));
  assert.equal(other.duplicate, false);
});

test('copies of one message sent concurrently are applied once', async () => {
  const site = await createTestSite(db.database);
  const raw = message(['PID|1||C1^^^H^MR||Same^Name', 'OBR|1||ORD1', 'OBX|1|NM|2345-7^Glucose^LN||5.5|mmol/L|||||F'], { type: 'ORU^R01^ORU_R01', controlId: 'RACE-1' });
  const outcomes = await Promise.all(Array.from({ length: 6 }, () => send(site, raw)));
  assert.ok(outcomes.every((o) => o.ackCode === 'AA'));
  assert.equal(new Set(outcomes.map((o) => o.ack)).size, 1);
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('C1'))!;
  assert.equal((await store.listPatientCompartment(patient.id!)).length, 1);
  assert.equal((await listMessages(db.database, site)).messages.length, 1);
});

test('a message is applied whole or not at all, and the AE names every problem', async () => {
  const site = await createTestSite(db.database);
  const raw = message(
    ['PID|1||W1^^^H^MR||Whole^Name||19990231', 'OBR|1||ORD2', 'OBX|1|NM|1-1^A^LN||abc||||||F', 'OBX|2|ED|1-2^B^LN||x^y||||||F', 'OBX|3|NM|1-3^C^LN||7||||||F'],
    { type: 'ORU^R01^ORU_R01' },
  );
  const outcome = await send(site, raw);
  assert.equal(outcome.ackCode, 'AE');
  assert.deepEqual(outcome.errors.map((e) => e.location), ['PID[1]-7.1', 'OBX[1]-5', 'OBX[2]-5.5']);
  assert.equal((outcome.ack.match(/\rERR\|/g) ?? []).length, 3);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('W1'), undefined);
  const log = await listMessages(db.database, site);
  assert.equal(log.messages[0]!.outcome, 'error');
  assert.equal(log.messages[0]!.problems.length, 3);
});

test('unsupported message types and events are AR with ERR-3 200 / 201; nothing stored', async () => {
  const site = await createTestSite(db.database);
  const type = await send(site, message(['PID|1||X1^^^H^MR'], { type: 'SIU^S12' }));
  assert.equal(type.ackCode, 'AR');
  assert.match(type.ack, /\rERR\|\|MSH\^1\^9\^1\^1\|200\^Unsupported message type\^HL70357\|E/);
  const event = await send(site, message(['PID|1||X1^^^H^MR'], { type: 'ADT^A17' }));
  assert.equal(event.ackCode, 'AR');
  assert.match(event.ack, /\|201\^Unsupported event code\^HL70357\|/);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('X1'), undefined);
});

test('a missing patient identifier is AE 101 at PID-3', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(site, message(['PID|1||""^^^H~||Nobody']));
  assert.equal(outcome.ackCode, 'AE');
  assert.equal(outcome.errors[0]!.code, 101);
  assert.equal(outcome.errors[0]!.location, 'PID[1]-3.1');
});

test('bodies that are not HL7 v2 get an AE without a header to echo', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(site, Buffer.from('{"resourceType":"Patient"}'));
  assert.equal(outcome.recognised, false);
  assert.equal(outcome.ackCode, 'AE');
  assert.match(outcome.ack, /\rMSA\|AE\|\|/);
});

test('ADT^A08 updates demographics and the visit context of the same patient', async () => {
  const site = await createTestSite(db.database);
  await send(site, message(['PID|1||V1^^^H^MR||Before^Anne||19800101|F', 'PV1|1|I|WARD^12^B^MAIN||||D1^House^Greg||||||||||||VN-1|||||||||||||||||||||||||20240101080000+0100']));
  const update = await send(site, message(['PID|1||V1^^^H^MR||After^Anne||19800101|F||||||555-1234^PRN^PH', 'PV1|1|O|CLINIC^1||||D1^House^Greg||||||||||||VN-1'], { type: 'ADT^A08^ADT_A01' }));
  assert.equal(update.ackCode, 'AA');
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('V1'))!;
  assert.equal(patient.name![0]!.family, 'After');
  assert.equal(patient.meta!.versionId, '2');
  assert.equal(patient.telecom![0]!.value, '555-1234');
  const visits = await listVisits(db.database, site, patient.id!);
  assert.equal(visits.length, 1);
  assert.equal(visits[0]!.patientClass, 'O');
  assert.equal(visits[0]!.visitNumber, 'VN-1');
  assert.equal(visits[0]!.attendingDoctor!.display, 'Greg House');
});

test('the HL7 null "" deletes a stored value; an empty field leaves it', async () => {
  const site = await createTestSite(db.database);
  await send(site, message(['PID|1||NULL1^^^H^MR||Keep^Me||19700101|F|||1 Road^^Town']));
  assert.equal((await send(site, message(['PID|1||NULL1^^^H^MR||||""|||||'], { type: 'ADT^A08' }))).ackCode, 'AA');
  const patient = (await resourceStore(db.database, site).findPatientByBusinessIdentifier('NULL1'))!;
  assert.equal(patient.birthDate, undefined);
  assert.equal(patient.name![0]!.family, 'Keep');
  assert.equal(patient.gender, 'female');
  assert.equal(patient.address![0]!.city, 'Town');
});

test('a corrected result updates the same Observation instead of adding one', async () => {
  const site = await createTestSite(db.database);
  const oru = (value: string, status: string) =>
    message(['PID|1||R1^^^H^MR||Result^Pat', 'ORC|RE|P1|F1', 'OBR|1|P1|F1|24323-8^Panel^LN|||20240101101010+0000', `OBX|1|NM|2345-7^Glucose^LN||${value}|mg/dL^^UCUM|70-99|N|||${status}`], { type: 'ORU^R01^ORU_R01' });
  assert.equal((await send(site, oru('90', 'F'))).ackCode, 'AA');
  assert.equal((await send(site, oru('95', 'C'))).ackCode, 'AA');
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('R1'))!;
  const observations = (await store.listPatientCompartment(patient.id!)) as Observation[];
  assert.equal(observations.length, 1);
  assert.equal(observations[0]!.valueQuantity!.value, 95);
  assert.equal(observations[0]!.status, 'corrected');
  assert.equal(observations[0]!.meta!.versionId, '2');
});

test('NTE segments after an OBX become notes of that Observation, after the order\'s notes', async () => {
  const site = await createTestSite(db.database);
  const raw = message(
    ['PID|1||N1^^^H^MR', 'OBR|1||ORD-N', 'NTE|1||order level comment', 'OBX|1|NM|2345-7^Glucose^LN||5.1|mmol/L|||||F', 'NTE|1||fasting sample', 'NTE|2||line two~line three', 'OBX|2|ST|8-8^Remark^LN||ok||||||F'],
    { type: 'ORU^R01^ORU_R01' },
  );
  assert.equal((await send(site, raw)).ackCode, 'AA');
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('N1'))!;
  const [glucose, remark] = (await store.listPatientCompartment(patient.id!)) as Observation[];
  // The order's note (NTE after OBR) comes first on every Observation of the order.
  assert.deepEqual(glucose!.note, [{ text: 'order level comment' }, { text: 'fasting sample' }, { text: 'line two\nline three' }]);
  assert.deepEqual(remark!.note, [{ text: 'order level comment' }]);
});

test('ED and RP results become DocumentReferences of the patient, re-sent without duplicates', async () => {
  const site = await createTestSite(db.database);
  const pdf = Buffer.from('%PDF-1.4 report').toString('base64');
  const raw = () =>
    message(
      ['PID|1||DOC1^^^H^MR', 'OBR|1||ORD-D|11502-2^Lab report^LN|||20240105101500+0100', `OBX|1|ED|11502-2^Lab report^LN||LAB^Application^PDF^Base64^${pdf}||||||F`, 'OBX|2|RP|18748-4^Imaging report^LN||https://pacs.example.org/r/1^PACS^TEXT^HTML||||||P'],
      { type: 'ORU^R01^ORU_R01' },
    );
  assert.equal((await send(site, raw())).ackCode, 'AA');
  assert.equal((await send(site, raw())).ackCode, 'AA');
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('DOC1'))!;
  const documents = (await store.listPatientCompartment(patient.id!)) as DocumentReference[];
  assert.equal(documents.length, 2);
  assert.equal(documents[0]!.resourceType, 'DocumentReference');
  assert.deepEqual(documents[0]!.content[0]!.attachment, { contentType: 'application/pdf', data: pdf });
  assert.equal(documents[0]!.docStatus, 'final');
  assert.equal(documents[0]!.date, '2024-01-05T10:15:00+01:00');
  assert.equal(documents[0]!.subject!.reference, `Patient/${patient.id}`);
  assert.deepEqual(documents[1]!.content[0]!.attachment, { url: 'https://pacs.example.org/r/1', contentType: 'text/html' });
  assert.equal(documents[1]!.docStatus, 'preliminary');
});

test('ADT^A40 moves the source record to the target; re-sending changes nothing; an unknown source is a warning', async () => {
  const site = await createTestSite(db.database);
  const store = resourceStore(db.database, site);
  await send(site, message(['PID|1||SRC^^^H^MR||Source^Sam||19700101|M']));
  await send(site, message(['PID|1||SRC^^^H^MR', 'OBR|1||O9', 'OBX|1|ST|8-8^Note^LN||text||||||F'], { type: 'ORU^R01' }));
  const source = (await store.findPatientByBusinessIdentifier('SRC'))!;
  const condition = await store.create<Condition>({ resourceType: 'Condition', subject: { reference: `Patient/${source.id}` }, code: { text: 'asthma' } });
  await db.database.query('INSERT INTO imaging_study (site_id, study_instance_uid, patient_id) VALUES ($1, $2, $3)', [site.siteId, '1.2.3.4', source.id]);

  const merge = message(['EVN|A40|20240101', 'PID|1||TGT^^^H^MR||Target^Tom||19700101|M', 'MRG|SRC^^^H^MR'], { type: 'ADT^A40^ADT_A39', controlId: 'MERGE-1' });
  const outcome = await send(site, merge);
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(outcome.warnings, []);
  const target = (await store.findPatientByBusinessIdentifier('TGT')) as Patient;
  const oldSource = (await store.read<Patient>('Patient', source.id!))!;
  assert.equal(oldSource.active, false);
  assert.deepEqual(oldSource.link, [{ other: { reference: `Patient/${target.id}` }, type: 'replaced-by' }]);
  assert.deepEqual(target.link, [{ other: { reference: `Patient/${source.id}` }, type: 'replaces' }]);
  assert.ok(target.identifier!.some((i) => i.value === 'SRC' && i.use === 'old'));
  assert.equal(target.identifier![0]!.value, 'TGT');
  const moved = await store.listPatientCompartment(target.id!);
  assert.deepEqual(moved.map((r) => r.resourceType).sort(), ['Condition', 'Observation']);
  assert.equal((await store.read<Condition>('Condition', condition.id!))!.subject.reference, `Patient/${target.id}`);
  assert.deepEqual(await store.listPatientCompartment(source.id!), []);
  const { rows } = await db.database.query('SELECT patient_id FROM imaging_study WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0]!.patient_id, target.id);

  // Re-sent with a new control id: already merged, nothing changes.
  const versions = target.meta!.versionId;
  const resend = await send(site, message(['EVN|A40|20240101', 'PID|1||TGT^^^H^MR||Target^Tom||19700101|M', 'MRG|SRC^^^H^MR'], { type: 'ADT^A40^ADT_A39' }));
  assert.equal(resend.ackCode, 'AA');
  assert.deepEqual(resend.warnings, []);
  assert.equal((await store.findPatientByBusinessIdentifier('TGT'))!.meta!.versionId, versions);

  const unknown = await send(site, message(['PID|1||NEW^^^H^MR||New^Nina', 'MRG|NOBODY^^^H^MR'], { type: 'ADT^A40' }));
  assert.equal(unknown.ackCode, 'AA');
  assert.equal(unknown.warnings[0]!.code, 204);
  assert.match(unknown.ack, /\rERR\|\|MRG\^1\^1\^1\|204\^Unknown key identifier\^HL70357\|W/);
  assert.ok(await store.findPatientByBusinessIdentifier('NEW'));
});

test('records of one site are invisible to another site', async () => {
  const a = await createTestSite(db.database);
  const b = await createTestSite(db.database);
  await send(a, message(['PID|1||SHARED-ID^^^H^MR||Only^InA']));
  assert.equal(await resourceStore(db.database, b).findPatientByBusinessIdentifier('SHARED-ID'), undefined);
  assert.equal((await listMessages(db.database, b)).messages.length, 0);
});

test('a database that cannot be reached gives AR with ERR 207, never AE', async () => {
  const site = await createTestSite(db.database);
  const down = new Database({ connectionString: 'postgres://postgres@127.0.0.1:1/none', maxConnections: 1 });
  try {
    const outcome = await send(site, message(['PID|1||DOWN^^^H^MR']), down);
    assert.equal(outcome.ackCode, 'AR');
    assert.equal(outcome.retry, true);
    assert.equal(outcome.errors[0]!.code, 207);
    assert.match(outcome.ack, /\rMSA\|AR\|/);
  } finally {
    await down.close();
  }
  // Nothing was logged, so the re-sent message is processed normally once the database is back.
  assert.equal((await listMessages(db.database, site)).messages.length, 0);
});
