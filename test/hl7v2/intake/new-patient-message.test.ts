// An admission of a patient the site does not know is stored by one call of
// record_new_patient_message, committed on its own (src/domain/patients/new-patient-message.ts).
// These check that it stores what the ordinary transaction stores, answers only after its commit,
// and keeps the guarantees of the ordinary path under concurrency: one patient for two messages
// about one new patient, the first answer for a repeated control id. Admissions that arrive at
// once share one call of record_new_patient_messages (src/domain/patients/new-patient-calls.ts):
// one commit, each answered after it as it would be alone, one failing without the others.
// Commits are held by an advisory lock that a deferred trigger on the message log takes (and a
// control id starting with FAIL makes it throw); the tests wait for states.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { listMessages, recordMessage } from '../../../src/domain/messages/message-log.ts';
import { listVisits } from '../../../src/domain/patients/visits.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2, type IntakeOutcome } from '../../../src/hl7v2/intake/intake.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

/** Taken at the commit of every message whose control id starts with HOLD. */
const holdLock = 4252;

let db: TestDatabase;
let holder: pg.Client;
before(async () => {
  db = await createTestDatabase();
  await db.database.query(`CREATE FUNCTION hold_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.control_id LIKE 'HOLD%' THEN PERFORM pg_advisory_xact_lock_shared(${holdLock}); END IF;
      IF NEW.control_id LIKE 'FAIL%' THEN RAISE EXCEPTION 'refused by the test'; END IF;
      RETURN NULL;
    END $$`);
  await db.database.query(
    'CREATE CONSTRAINT TRIGGER hold_commit AFTER INSERT ON inbound_message DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION hold_commit()',
  );
  holder = new pg.Client({ connectionString: db.connectionString });
  await holder.connect();
});
after(async () => {
  await holder.query('SELECT pg_advisory_unlock_all()');
  await holder.end();
  await db.drop();
});

const send = (site: SiteContext, raw: Buffer) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'mllp', remoteAddress: '127.0.0.1' } });

const pid = (mrn: string, family: string) => `PID|1||${mrn}^^^H^MR~NHS${mrn}^^^NHS^NH||${family}^Ann^Marie||19800214|F|||1 Main St^^Leeds^^LS1 4AP^GBR||^PRN^PH^^^555^0100`;

/** Polls a state; a state never reached fails the test rather than hanging it. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let look = 0; look < 3_000; look++) {
    if (await condition()) return;
    await delay(10);
  }
  assert.fail('the service never reached the state the test waits for');
}

/** Sessions waiting for an advisory lock: `holdLock` itself, or any other (a patient's identifier). */
async function waiting(which: 'hold' | 'other'): Promise<number> {
  const { rows } = await db.database.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND (objid = $1) = $2`,
    [holdLock, which === 'hold'],
  );
  return rows[0]!.n;
}

function settledFlag(promise: Promise<IntakeOutcome>): { settled: boolean } {
  const flag = { settled: false };
  void promise.finally(() => (flag.settled = true));
  return flag;
}

async function patientRows(site: SiteContext, mrn: string): Promise<Record<string, unknown>[]> {
  const { rows } = await db.database.query(
    `SELECT r.version_id, r.patient_id, r.active, r.name_search, r.birth_date_start::text, r.birth_date_end::text,
            (SELECT count(*)::int FROM clinical_resource_version v WHERE v.site_id = r.site_id AND v.resource_type = r.resource_type AND v.id = r.id) AS versions,
            (SELECT array_agg(t.param || '|' || t.system || '|' || t.code ORDER BY t.param, t.system, t.code) FROM clinical_resource_token t
              WHERE t.site_id = r.site_id AND t.resource_type = r.resource_type AND t.resource_id = r.id) AS tokens
       FROM clinical_resource r WHERE r.site_id = $1 AND r.resource_type = 'Patient' AND r.business_identifier = $2`,
    [site.siteId, mrn],
  );
  return rows;
}

test('an admission of a new patient stores the rows an update creating the patient stores', async () => {
  const site = await createTestSite(db.database);
  assert.equal((await send(site, message([pid('NP1', 'Fast'), 'PV1|1|I|WARD^1||||||||||||||||VN-NP1']))).ackCode, 'AA');
  assert.equal((await send(site, message([pid('NP2', 'Fast'), 'PV1|1|I|WARD^1||||||||||||||||VN-NP2'], { type: 'ADT^A08^ADT_A01' }))).ackCode, 'AA');
  const [admitted] = await patientRows(site, 'NP1');
  const [updated] = await patientRows(site, 'NP2');
  assert.ok(admitted && updated);
  const tokens = (row: Record<string, unknown>) => (row.tokens as string[]).map((token) => token.replace(/NP\d/g, 'NP'));
  assert.deepEqual({ ...admitted, tokens: tokens(admitted) }, { ...updated, tokens: tokens(updated) });
  assert.equal(admitted.versions, 1);
  const store = resourceStore(db.database, site);
  const [one, two] = [(await store.findPatientByBusinessIdentifier('NP1'))!, (await store.findPatientByBusinessIdentifier('NP2'))!];
  const comparable = (p: typeof one) => JSON.stringify({ ...p, id: undefined, meta: undefined }).replace(/NP\d/g, 'NP');
  assert.equal(comparable(one), comparable(two));
  assert.deepEqual((await listVisits(db.database, site, one.id!)).map((v) => [v.visitNumber, v.patientClass]), [['VN-NP1', 'I']]);
  const logged = (await listMessages(db.database, site)).messages;
  assert.deepEqual(logged.map((m) => [m.messageType, m.outcome]).sort(), [['ADT^A01', 'processed'], ['ADT^A08', 'processed']]);
});

test('the answer comes only after the commit', async () => {
  const site = await createTestSite(db.database);
  await holder.query('SELECT pg_advisory_lock($1)', [holdLock]);
  const answer = send(site, message([pid('NP3', 'Held'), 'PV1|1|I'], { controlId: 'HOLD-1' }));
  const flag = settledFlag(answer);
  try {
    await until(async () => (await waiting('hold')) === 1);
    assert.equal(flag.settled, false, 'no answer before the commit');
    assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('NP3'), undefined, 'nothing committed yet');
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1)', [holdLock]);
  }
  assert.equal((await answer).ackCode, 'AA');
  assert.ok(await resourceStore(db.database, site).findPatientByBusinessIdentifier('NP3'));
});

test('two admissions of one new patient create one patient: the second waits for the first and updates it', async () => {
  const site = await createTestSite(db.database);
  await holder.query('SELECT pg_advisory_lock($1)', [holdLock]);
  const first = send(site, message([pid('NP4', 'First'), 'PV1|1|I'], { controlId: 'HOLD-2' }));
  let second: Promise<IntakeOutcome> | undefined;
  try {
    await until(async () => (await waiting('hold')) === 1);
    // The second call waits for the identifier's lock, which the first holds until its commit.
    second = send(site, message([pid('NP4', 'Second'), 'PV1|1|I'], { controlId: 'NP4-B' }));
    await until(async () => (await waiting('other')) === 1);
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1)', [holdLock]);
  }
  assert.equal((await first).ackCode, 'AA');
  assert.equal((await second!).ackCode, 'AA');
  const rows = await patientRows(site, 'NP4');
  assert.equal(rows.length, 1, 'one patient');
  assert.equal(rows[0]!.version_id, 2, 'the second message updated the first one\'s patient');
  assert.equal((await resourceStore(db.database, site).findPatientByBusinessIdentifier('NP4'))!.name![0]!.family, 'Second');
});

test('two copies of one admission at once: stored once, both answered with the first ACK', async () => {
  const site = await createTestSite(db.database);
  const copy = message([pid('NP5', 'Twice'), 'PV1|1|I'], { controlId: 'HOLD-3' });
  await holder.query('SELECT pg_advisory_lock($1)', [holdLock]);
  const first = send(site, copy);
  let second: Promise<IntakeOutcome> | undefined;
  try {
    await until(async () => (await waiting('hold')) === 1);
    second = send(site, copy);
    await until(async () => (await waiting('other')) === 1);
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1)', [holdLock]);
  }
  const [a, b] = [await first, await second!];
  assert.deepEqual([a.ackCode, a.duplicate, b.ackCode, b.duplicate], ['AA', false, 'AA', true]);
  assert.equal(b.ack, a.ack);
  const rows = await patientRows(site, 'NP5');
  assert.deepEqual(rows.map((row) => row.version_id), [1], 'one patient, not updated by the copy');
  assert.equal((await listMessages(db.database, site)).messages.length, 1);
});

test('an admission whose control id is logged already writes nothing and gets the logged answer', async () => {
  const site = await createTestSite(db.database);
  await db.database.transaction((tx) =>
    recordMessage(tx, site, {
      protocol: 'hl7v2',
      transport: 'mllp',
      sendingApplication: 'LAB',
      sendingFacility: 'HOSP',
      controlId: 'NP6-1',
      messageType: 'ADT^A01',
      outcome: 'error',
      ackCode: 'AE',
      problems: [],
      ackText: 'MSH|^~\\&|GATEWAY|SITE|LAB|HOSP|20240102030405||ACK^A01^ACK|A1|P|2.5.1\rMSA|AE|NP6-1',
      raw: Buffer.from('earlier'),
    }),
  );
  const answer = await send(site, message([pid('NP6', 'Late'), 'PV1|1|I'], { controlId: 'NP6-1' }));
  assert.deepEqual([answer.ackCode, answer.duplicate], ['AE', true]);
  assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('NP6'), undefined, 'no patient written');
  assert.equal((await listMessages(db.database, site)).messages.length, 1);
});

const admission = (mrn: string, family: string, controlId: string) =>
  message([`PID|1||${mrn}^^^H^MR||${family}^Ann||19800214|F`, `PV1|1|I|WARD^1||||||||||||||||VN-${controlId}`], { controlId });

/** The transaction ids that wrote the log entries of these control ids. */
async function writers(site: SiteContext, controlIds: string[]): Promise<string[]> {
  const { rows } = await db.database.query<{ xmin: string }>(
    'SELECT DISTINCT xmin::text FROM inbound_message WHERE site_id = $1 AND control_id = ANY($2)',
    [site.siteId, controlIds],
  );
  return rows.map((row) => row.xmin);
}

const versions = async (site: SiteContext, mrn: string) => (await patientRows(site, mrn)).map((row) => row.version_id);

test('admissions arriving together share one commit, and each gets the answer it would get alone', async () => {
  const site = await createTestSite(db.database);
  const copy = admission('T3', 'Copy', 'T-3');
  const answers = await Promise.all([
    send(site, admission('T1', 'One', 'T-1')),
    send(site, admission('T2', 'Two', 'T-2')),
    send(site, copy),
    send(site, copy),
    send(site, admission('T1', 'Again', 'T-4')),
  ]);
  assert.deepEqual(answers.map((a) => a.ackCode), ['AA', 'AA', 'AA', 'AA', 'AA']);
  assert.deepEqual(answers.map((a) => a.duplicate), [false, false, false, true, false], 'the copy is answered as a re-send');
  assert.equal(answers[3]!.ack, answers[2]!.ack, 'with the first answer');
  assert.equal((await writers(site, ['T-1', 'T-2', 'T-3'])).length, 1, 'one transaction stored the three new patients');
  assert.deepEqual(await versions(site, 'T2'), [1]);
  for (const mrn of ['T1', 'T2', 'T3']) {
    const [row] = await patientRows(site, mrn);
    const expected = ['gender|http://hl7.org/fhir/administrative-gender|female', `identifier||${mrn}`];
    assert.deepEqual(row!.tokens, expected, `each patient's token rows are its own (${mrn})`);
  }
  assert.deepEqual(await versions(site, 'T3'), [1], 'the copy stored nothing');
  assert.deepEqual(await versions(site, 'T1'), [2], 'the second admission of T1 found the patient the first created, and updated it');
  assert.equal((await resourceStore(db.database, site).findPatientByBusinessIdentifier('T1'))!.name![0]!.family, 'Again');
  assert.equal((await listMessages(db.database, site)).messages.length, 4);
});

test('large admissions arriving together are not sent in one call past 1 MB', async () => {
  const site = await createTestSite(db.database);
  const large = (mrn: string, controlId: string) => message([`PID|1||${mrn}^^^H^MR||Large^Ann||19800214|F`, 'PV1|1|I', `ZBG|${'x'.repeat(600_000)}`], { controlId });
  const answers = await Promise.all([send(site, large('L1', 'L-1')), send(site, large('L2', 'L-2'))]);
  assert.deepEqual(answers.map((a) => a.ackCode), ['AA', 'AA']);
  assert.equal((await writers(site, ['L-1', 'L-2'])).length, 2, 'each in a call and a commit of its own');
});

test('admissions arriving together are answered only after their commit', async () => {
  const site = await createTestSite(db.database);
  await holder.query('SELECT pg_advisory_lock($1)', [holdLock]);
  const sent = [send(site, admission('H1', 'Held', 'HOLD-1')), send(site, admission('H2', 'Held', 'HOLD-2')), send(site, admission('H3', 'Held', 'HOLD-3'))];
  const flags = sent.map(settledFlag);
  try {
    await until(async () => (await waiting('hold')) === 1);
    await delay(50);
    assert.deepEqual(flags.map((flag) => flag.settled), [false, false, false], 'no answer before the commit');
    assert.equal(await resourceStore(db.database, site).findPatientByBusinessIdentifier('H1'), undefined, 'nothing committed yet');
  } finally {
    await holder.query('SELECT pg_advisory_unlock($1)', [holdLock]);
  }
  const answers = await Promise.all(sent);
  assert.deepEqual(answers.map((a) => a.ackCode), ['AA', 'AA', 'AA']);
  assert.equal((await writers(site, ['HOLD-1', 'HOLD-2', 'HOLD-3'])).length, 1, 'one commit held all three');
});

test('a message that fails the shared call fails alone: the others are stored, each in its own commit', async () => {
  const site = await createTestSite(db.database);
  const answers = await Promise.all([send(site, admission('F1', 'Kept', 'K-1')), send(site, admission('F2', 'Refused', 'FAIL-1')), send(site, admission('F3', 'Kept', 'K-3'))]);
  assert.deepEqual(answers.map((a) => a.ackCode === 'AA'), [true, false, true]);
  assert.equal(answers[1]!.retry, true, 'the failing one is told to send again (an error of the database, not of the message)');
  assert.equal((await writers(site, ['K-1', 'K-3'])).length, 2, 'stored one by one after the shared call failed');
  assert.deepEqual(await versions(site, 'F1'), [1]);
  assert.deepEqual(await versions(site, 'F3'), [1]);
  assert.deepEqual(await versions(site, 'F2'), [], 'nothing of the failing message');
});
