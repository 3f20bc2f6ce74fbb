// Order comments (NTE after OBR, ORU_R01 ORDER_OBSERVATION group, HL7 v2.5.1 section 7.3.1) are
// kept as notes of every Observation of the order; a note with nowhere to go is named in the ACK.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Observation } from '@medplum/fhirtypes';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { ingestHl7v2 } from '../../../src/hl7v2/intake/intake.ts';
import { fhirSurface } from '../../../src/fhir/surface.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { buildTestOrigin, createTestApiKey } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';
import { message } from '../support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const send = (site: SiteContext, raw: Buffer) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'http', remoteAddress: '127.0.0.1' } });
const oru = (segments: string[]) => message(segments, { type: 'ORU^R01^ORU_R01' });

async function resultsOf(site: SiteContext, mrn: string): Promise<Observation[]> {
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier(mrn))!;
  return (await store.listPatientCompartment(patient.id!)) as Observation[];
}

const antiD = 'Probable prophylactic anti-D known previously but not detected in this sample.';

test('a group-and-screen comment after the OBR is a note of every Observation of the order, each order its own', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(
    site,
    oru([
      'PID|1||BB1^^^H^MR||Bank^Blood',
      'ORC|RE|PL-700|FL-700',
      'OBR|1|PL-700|FL-700^BB|GS^Group and screen^L|||20240308080000+0000',
      `NTE|1|L|${antiD}`,
      'NTE|2|L|Sample hemolysed~Repeat advised',
      'OBX|1|CWE|882-1^ABO and Rh group^LN||278149003^O RhD positive^SCT||||||F',
      'OBX|2|CWE|890-4^Blood group antibody screen^LN||260385009^Negative^SCT||||||F',
      'NTE|1|L|Screen by column agglutination',
      'OBR|2|PL-701|FL-701^BB|DAT^Direct antiglobulin test^L|||20240308080000+0000',
      'OBX|1|CWE|1007-4^Direct antiglobulin test^LN||260385009^Negative^SCT||||||F',
    ]),
  );
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(outcome.warnings, []);
  const [group, screen, dat] = await resultsOf(site, 'BB1');
  assert.deepEqual(group!.note, [{ text: antiD }, { text: 'Sample hemolysed\nRepeat advised' }]);
  assert.deepEqual(screen!.note, [{ text: antiD }, { text: 'Sample hemolysed\nRepeat advised' }, { text: 'Screen by column agglutination' }]);
  assert.equal(dat!.note, undefined);
});

test('notes the service cannot keep are named in warnings of the AA', async () => {
  const site = await createTestSite(db.database);
  const pdf = Buffer.from('%PDF-1.4 report').toString('base64');
  const outcome = await send(
    site,
    oru([
      'PID|1||BB2^^^H^MR',
      'NTE|1||patient comment',
      'OBR|1|PL-710|FL-710^LAB|11502-2^Lab report^LN|||20240308080000+0000',
      'NTE|1||order comment with only a document',
      `OBX|1|ED|11502-2^Lab report^LN||LAB^Application^PDF^Base64^${pdf}||||||F`,
      'NTE|1||comment on the document',
      'OBR|2|PL-711|FL-711^LAB|2345-7^Glucose^LN|||20240308080000+0000',
      'NTE|1||kept on the glucose',
      'OBX|1|NM|2345-7^Glucose^LN||5.5|mmol/L|||||F',
    ]),
  );
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(
    outcome.warnings.map((w) => [w.code, w.location, w.message]),
    [
      [100, 'NTE[1]', 'NTE[1] after PID[1] was not stored: only notes on an order (after OBR) or on an Observation (after its OBX) are kept'],
      [100, 'NTE[3]', 'NTE[3] after OBX[1] was not stored: only notes on an order (after OBR) or on an Observation (after its OBX) are kept'],
      [100, 'OBR[1]', 'the 1 order note(s) (NTE after OBR[1]) were not stored: the order has no Observation to carry them'],
    ],
  );
  assert.match(outcome.ack, /\rERR\|\|NTE\^1\|100\^Segment sequence error\^HL70357\|W\|/);
  const stored = await resultsOf(site, 'BB2');
  assert.deepEqual(stored.map((r) => r.resourceType), ['DocumentReference', 'Observation']);
  assert.deepEqual(stored[1]!.note, [{ text: 'kept on the glucose' }]);
});

test('a FHIR client reading any result of the order sees the order note', async () => {
  const site = await createTestSite(db.database);
  const key = await createTestApiKey(db.database, site);
  const raw = oru(['PID|1||BB3^^^H^MR', 'OBR|1|PL-720|FL-720^BB|GS^Group and screen^L', `NTE|1|L|${antiD}`, 'OBX|1|CWE|890-4^Blood group antibody screen^LN||260385009^Negative^SCT||||||F']);
  assert.equal((await send(site, raw)).ackCode, 'AA');
  const fhir = await buildTestOrigin(fhirSurface, db.database);
  try {
    const get = (url: string) => fhir.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    const patient = (await get('/fhir/Patient?identifier=BB3')).json().entry[0].resource;
    const bundle = (await get(`/fhir/Observation?patient=Patient/${patient.id}`)).json();
    assert.deepEqual(bundle.entry.map((entry: { resource: Observation }) => entry.resource.note), [[{ text: antiD }]]);
  } finally {
    await fhir.close();
  }
});

test('segments of an ORU that the service does not store are named in one warning', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(
    site,
    oru([
      'SFT|Lab Vendor^L|4.2|LabSystem|42',
      'PID|1||BB4^^^H^MR',
      'PV2|||^Headache',
      'OBR|1|PL-730|FL-730^LAB|2345-7^Glucose^LN|||20240308080000+0000',
      'TQ1|1||||||20240308080000+0000',
      'OBX|1|NM|2345-7^Glucose^LN||5.5|mmol/L|||||F',
      'SPM|1|SP-1||BLD^Blood^HL70487',
      'SPM|2|SP-2||SER^Serum^HL70487',
      'ZLB|1|local data',
    ]),
  );
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(
    outcome.warnings.map((w) => [w.code, w.message]),
    [[100, 'segments not stored (an ORU^R01 is stored from its PID, PV1, ORC, OBR, OBX and NTE): SFT, PV2, TQ1, SPM (2), ZLB']],
  );
});
