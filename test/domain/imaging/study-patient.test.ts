import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Patient } from '@medplum/fhirtypes';
import { indexInstance } from '../../../src/domain/imaging/index-instance.ts';
import { getStudy } from '../../../src/domain/imaging/worklist.ts';
import { ensurePatient } from '../../../src/domain/patients/demographics.ts';
import { mergePatients } from '../../../src/domain/patients/merge.ts';
import { resourceStore } from '../../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance, uid } from './fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function readPatient(site: SiteContext, id: string): Promise<Patient | undefined> {
  return (await resourceStore(db.database, site).read('Patient', id)) as Patient | undefined;
}

test("a study links to the site's existing patient with that business identifier, which DICOM does not update", async () => {
  const site = await createTestSite(db.database);
  const { patientId } = await db.database.transaction((tx) =>
    ensurePatient(tx, site, { resourceType: 'Patient', identifier: [{ value: 'MRN-77' }], name: [{ family: 'Known', given: ['Kate'] }], birthDate: '1980-05-05' }),
  );
  const instance = receivedInstance({ patientId: 'MRN-77', patientName: 'Different^Name', patientBirthDate: '19990101' });
  const result = await db.database.transaction((tx) => indexInstance(tx, site, instance));
  assert.equal(result.patientId, patientId);
  assert.equal((await getStudy(db.database, site, instance.studyInstanceUid))?.patientId, patientId);
  const patient = await readPatient(site, patientId);
  assert.equal(patient?.name?.[0]?.family, 'Known');
  assert.equal(patient?.birthDate, '1980-05-05');
});

test('without such a patient, one is created from the DICOM demographics', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance({ patientId: 'NEW-1', patientName: 'Lestrade^G^^Dr^Jr', patientBirthDate: '19450312', patientSex: 'M' });
  const result = await db.database.transaction((tx) => indexInstance(tx, site, instance));
  assert.ok(result.patientId);
  const patient = await readPatient(site, result.patientId);
  assert.equal(patient?.identifier?.[0]?.value, 'NEW-1');
  assert.deepEqual(patient?.name?.[0], { use: 'official', family: 'Lestrade', given: ['G'], prefix: ['Dr'], suffix: ['Jr'], text: 'Dr G Lestrade Jr' });
  assert.equal(patient?.birthDate, '1945-03-12');
  assert.equal(patient?.gender, 'male');

  // The next study of that PatientID finds the same patient.
  const next = await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId: 'NEW-1', patientName: 'Other^Name' })));
  assert.equal(next.patientId, result.patientId);
});

test('a name written only in ideographic characters (PS3.5 annex I) names the new patient', async () => {
  const site = await createTestSite(db.database);
  const result = await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId: 'KR-1', patientName: '=洪^吉洞=홍^길동' })));
  const patient = await readPatient(site, result.patientId!);
  assert.equal(patient?.name?.[0]?.family, '洪');
  assert.deepEqual(patient?.name?.[0]?.given, ['吉洞']);
});

test('the same PatientID in two sites gives two patients, one per site', async () => {
  const [a, b] = [await createTestSite(db.database), await createTestSite(db.database)];
  const inA = await db.database.transaction((tx) => indexInstance(tx, a, receivedInstance({ patientId: 'SHARED' })));
  const inB = await db.database.transaction((tx) => indexInstance(tx, b, receivedInstance({ patientId: 'SHARED' })));
  assert.ok(inA.patientId && inB.patientId);
  assert.notEqual(inA.patientId, inB.patientId);
  assert.equal(await readPatient(b, inA.patientId), undefined);
  assert.equal(await readPatient(a, inB.patientId), undefined);
});

test('an empty PatientID leaves the study unlinked and creates no patient', async () => {
  const site = await createTestSite(db.database);
  for (const patientId of [undefined, '', '   ']) {
    const instance = receivedInstance({ patientId, patientName: '^^^^' });
    const result = await db.database.transaction((tx) => indexInstance(tx, site, instance));
    assert.equal(result.patientId, null);
    assert.equal((await getStudy(db.database, site, instance.studyInstanceUid))?.patientId, null);
  }
  const { rows } = await db.database.query(`SELECT count(*)::int AS n FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient'`, [site.siteId]);
  assert.equal(rows[0]?.n, 0);
});

test('concurrent studies of one new PatientID create exactly one patient', async () => {
  const site = await createTestSite(db.database);
  const studyUid = uid();
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, n) =>
      db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId: 'RACE-1', studyInstanceUid: n % 2 === 0 ? studyUid : uid() }))),
    ),
  );
  assert.equal(new Set(results.map((r) => r.patientId)).size, 1);
  const { rows } = await db.database.query(`SELECT count(*)::int AS n FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient'`, [site.siteId]);
  assert.equal(rows[0]?.n, 1);
});

test('after an HL7 merge, a study sent with the old PatientID joins the surviving patient', async () => {
  const site = await createTestSite(db.database);
  const before = await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId: 'MRN-OLD' })));
  const merge = await db.database.transaction((tx) =>
    mergePatients(tx, site, { sourceIdentifier: 'MRN-OLD', target: { resourceType: 'Patient', identifier: [{ value: 'MRN-NEW' }] } }),
  );
  assert.ok(merge.sourceFound);
  assert.notEqual(merge.targetId, before.patientId);
  assert.equal((await getStudy(db.database, site, before.studyInstanceUid))?.patientId, merge.targetId, 'the merge moved the old study');

  const after = await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId: 'MRN-OLD' })));
  assert.equal(after.patientId, merge.targetId);
  const { rows } = await db.database.query(
    `SELECT count(*)::int AS n FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient' AND active`,
    [site.siteId],
  );
  assert.equal(rows[0]?.n, 1, 'no new patient was created under the merged identifier');
});
