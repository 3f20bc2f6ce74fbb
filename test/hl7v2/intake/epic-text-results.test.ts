// Epic radiology interfaces send report text as `OBX|n|TX|&GDT|...`: the identifier in a
// subcomponent of OBX-3.1, whose first subcomponent is empty. Such reports, and OBX-3 with text
// but no code, are accepted with a warning; each line is its own Observation, in order.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Observation } from '@medplum/fhirtypes';
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

const send = (site: SiteContext, raw: Buffer) => ingestHl7v2(db.database, { raw, site, defaultCharset: 'UNICODE UTF-8', origin: { transport: 'mllp', remoteAddress: '127.0.0.1' } });

const report = (impression: string) =>
  message(
    [
      'PID|1||RAD1^^^H^MR||Scan^Sally',
      'ORC|RE|ORD-800^EPC|ACC-800^EPC',
      'OBR|1|ORD-800^EPC|ACC-800^EPC|IMG123^CT HEAD WO CONTRAST^IMGPRC|||20240309101500-0500',
      'OBX|1|TX|&GDT|1|CT HEAD WITHOUT CONTRAST||||||F',
      'OBX|2|TX|&GDT|1|HISTORY: headache.||||||F',
      'OBX|3|TX|&GDT|1|FINDINGS: No acute intracranial abnormality.||||||F',
      `OBX|4|TX|&IMP|1|${impression}||||||F`,
      'OBX|5|ST|^Radiologist comment||Discussed with the ordering clinician.||||||F',
    ],
    { type: 'ORU^R01^ORU_R01' },
  );

test('an Epic-style text report is accepted, each line an Observation in order, with warnings', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(site, report('IMPRESSION: Normal study.'));
  assert.equal(outcome.ackCode, 'AA');
  assert.deepEqual(
    outcome.warnings.map((w) => [w.code, w.location]),
    [
      [102, 'OBX[1]-3.1'],
      [102, 'OBX[2]-3.1'],
      [102, 'OBX[3]-3.1'],
      [102, 'OBX[4]-3.1'],
      [101, 'OBX[5]-3.1'],
      [205, 'OBX[1]'],
    ],
  );
  assert.equal(outcome.warnings[0]!.message, 'OBX-3.1 has subcomponents ("&GDT"); read as "GDT"');
  assert.equal(outcome.warnings[4]!.message, 'OBX-3 has no code, only the text "Radiologist comment"; the text identifies the result');
  const store = resourceStore(db.database, site);
  const patient = (await store.findPatientByBusinessIdentifier('RAD1'))!;
  const lines = (await store.listPatientCompartment(patient.id!)) as Observation[];
  assert.deepEqual(
    lines.map((o) => [o.code, o.valueString]),
    [
      [{ coding: [{ code: 'GDT' }] }, 'CT HEAD WITHOUT CONTRAST'],
      [{ coding: [{ code: 'GDT' }] }, 'HISTORY: headache.'],
      [{ coding: [{ code: 'GDT' }] }, 'FINDINGS: No acute intracranial abnormality.'],
      [{ coding: [{ code: 'IMP' }] }, 'IMPRESSION: Normal study.'],
      [{ text: 'Radiologist comment' }, 'Discussed with the ordering clinician.'],
    ],
  );

  // The addended report: the impression changes, every other line is found again unchanged.
  assert.equal((await send(site, report('IMPRESSION: Normal study. Addendum: small old lacunar infarct.'))).ackCode, 'AA');
  const again = (await store.listPatientCompartment(patient.id!)) as Observation[];
  assert.deepEqual(again.map((o) => o.id), lines.map((o) => o.id));
  assert.deepEqual(again.map((o) => o.meta?.versionId), ['1', '1', '1', '2', '1']);
});

test('an OBX-3 with neither code nor text is still refused', async () => {
  const site = await createTestSite(db.database);
  const outcome = await send(site, message(['PID|1||RAD2^^^H^MR', 'OBR|1||ACC-801', 'OBX|1|TX|&|1|text||||||F'], { type: 'ORU^R01^ORU_R01' }));
  assert.equal(outcome.ackCode, 'AE');
  assert.deepEqual(outcome.errors.map((e) => [e.code, e.location]), [[101, 'OBX[1]-3.1']]);
});
