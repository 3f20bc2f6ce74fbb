import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isDomainError } from '../../../src/domain/errors.ts';
import { indexInstance, type ReceivedInstance } from '../../../src/domain/imaging/index-instance.ts';
import { reassignImagingPatient } from '../../../src/domain/imaging/reassign-patient.ts';
import { ensurePatient } from '../../../src/domain/patients/demographics.ts';
import { recordProcedureStep, type ProcedureStepStatus } from '../../../src/domain/imaging/procedure-steps.ts';
import { createReport } from '../../../src/domain/imaging/reports.ts';
import { listWorklist, type WorklistFilter } from '../../../src/domain/imaging/worklist.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance, uid } from './fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function study(site: SiteContext, overrides: Partial<ReceivedInstance>, steps: ProcedureStepStatus[] = [], reports: ('draft' | 'completed')[] = []): Promise<string> {
  const instance = receivedInstance(overrides);
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  for (const status of steps) {
    await db.database.transaction((tx) => recordProcedureStep(tx, site, { sopInstanceUid: uid(), studyInstanceUid: instance.studyInstanceUid, status }));
  }
  for (const status of reports) await createReport(db.database, site, { studyInstanceUid: instance.studyInstanceUid, text: 'Findings', status });
  return instance.studyInstanceUid;
}

async function uids(site: SiteContext, filter: Partial<WorklistFilter>): Promise<string[]> {
  const { studies } = await listWorklist(db.database, site, { limit: 100, offset: 0, ...filter });
  return studies.map((s) => s.studyInstanceUid);
}

test('filters by date range, modality, patient, step status and report status; newest first', async () => {
  const site = await createTestSite(db.database);
  const ct = await study(site, { studyDate: '20260110', modality: 'CT', patientId: 'P-1', patientName: 'Doe^Jane' }, ['IN PROGRESS', 'COMPLETED'], ['draft']);
  const mr = await study(site, { studyDate: '20260115', modality: 'MR', patientId: 'P-2', patientName: 'Roe^Richard' }, ['COMPLETED'], ['draft', 'completed']);
  const us = await study(site, { studyDate: '20251231', modality: 'US', patientId: 'P-100%', patientName: 'Poe^Edgar' }, ['DISCONTINUED']);
  const undated = await study(site, { studyDate: undefined, modality: 'CR', patientId: 'P-3', patientName: 'Doe^John' });

  assert.deepEqual(await uids(site, {}), [mr, ct, us, undated]);
  assert.deepEqual(await uids(site, { from: '2026-01-01' }), [mr, ct]);
  assert.deepEqual(await uids(site, { from: '20260101', to: '2026-01-10' }), [ct]);
  assert.deepEqual(await uids(site, { to: '2025-12-31' }), [us]);
  assert.deepEqual(await uids(site, { modality: 'mr' }), [mr]);
  assert.deepEqual(await uids(site, { patient: 'P-2' }), [mr]);
  assert.deepEqual(await uids(site, { patient: 'doe' }), [ct, undated]);
  assert.deepEqual(await uids(site, { patient: '%' }), [], 'LIKE wildcards in the search text are literal');
  assert.deepEqual(await uids(site, { patient: 'P-100%' }), [us]);
  assert.deepEqual(await uids(site, { stepStatus: 'IN PROGRESS' }), [ct], 'any step in progress makes the study in progress');
  assert.deepEqual(await uids(site, { stepStatus: 'COMPLETED' }), [mr]);
  assert.deepEqual(await uids(site, { stepStatus: 'DISCONTINUED' }), [us]);
  assert.deepEqual(await uids(site, { stepStatus: 'none' }), [undated]);
  assert.deepEqual(await uids(site, { reportStatus: 'completed' }), [mr]);
  assert.deepEqual(await uids(site, { reportStatus: 'draft' }), [ct]);
  assert.deepEqual(await uids(site, { reportStatus: 'none' }), [us, undated]);
  assert.deepEqual(await uids(site, { modality: 'CT', reportStatus: 'completed' }), []);

  const { studies } = await listWorklist(db.database, site, { limit: 100, offset: 0, modality: 'MR' });
  assert.equal(studies[0]?.stepStatus, 'COMPLETED');
  assert.equal(studies[0]?.reportStatus, 'completed');
  assert.equal(studies[0]?.instanceCount, 1);
  assert.equal(studies[0]?.patientDisplayName, 'Roe, Richard');
});

test('pages carry the total of the filtered list', async () => {
  const site = await createTestSite(db.database);
  for (let day = 1; day <= 5; day++) await study(site, { studyDate: `202602${String(day).padStart(2, '0')}` });
  const first = await listWorklist(db.database, site, { limit: 2, offset: 0 });
  const last = await listWorklist(db.database, site, { limit: 2, offset: 4 });
  const beyond = await listWorklist(db.database, site, { limit: 2, offset: 50 });
  assert.equal(first.total, 5);
  assert.deepEqual(first.studies.map((s) => s.studyDate), ['2026-02-05', '2026-02-04']);
  assert.deepEqual(last.studies.map((s) => s.studyDate), ['2026-02-01']);
  assert.equal(last.total, 5);
  assert.equal(beyond.studies.length, 0);
  assert.equal(beyond.total, 5);
});

test('a site sees only its own studies, and steps of other sites do not colour them', async () => {
  const [a, b] = [await createTestSite(db.database), await createTestSite(db.database)];
  const mine = await study(a, {});
  // Site b records a step and a study with the same study UID: site a must not see either.
  await db.database.transaction((tx) => recordProcedureStep(tx, b, { sopInstanceUid: uid(), studyInstanceUid: mine, status: 'IN PROGRESS' }));
  await study(b, { studyInstanceUid: mine });
  const inA = await listWorklist(db.database, a, { limit: 10, offset: 0 });
  assert.equal(inA.total, 1);
  assert.equal(inA.studies[0]?.stepStatus, null);
  assert.equal(inA.studies[0]?.instanceCount, 1);
  const c = await createTestSite(db.database);
  assert.equal((await listWorklist(db.database, c, { limit: 10, offset: 0 })).total, 0);
});

test('bad filters are refused with the field named', async () => {
  const site = await createTestSite(db.database);
  const cases: [string, Partial<WorklistFilter>][] = [
    ['from', { from: 'yesterday' }],
    ['to', { to: '2026-02-30' }],
    ['from', { from: '2026-02-02', to: '2026-02-01' }],
    ['modality', { modality: 'C T!' }],
    ['stepStatus', { stepStatus: 'DONE' as never }],
    ['reportStatus', { reportStatus: 'final' as never }],
  ];
  for (const [location, filter] of cases) {
    await assert.rejects(listWorklist(db.database, site, { limit: 10, offset: 0, ...filter }), (error) =>
      isDomainError(error, 'invalid') && error.issues[0]?.location === location,
    );
  }
});

test("after a merge, the surviving patient's identifier finds the studies its modality filed under the old one", async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance({ patientId: 'OLD-1' });
  const { patientId: oldPatient } = await db.database.transaction((tx) => indexInstance(tx, site, instance));
  const { patientId: survivor } = await db.database.transaction((tx) =>
    ensurePatient(tx, site, { resourceType: 'Patient', identifier: [{ value: 'NEW-1' }] }),
  );
  assert.deepEqual(await uids(site, { patient: 'NEW-1' }), []);
  await db.database.transaction((tx) => reassignImagingPatient(tx, site, oldPatient!, survivor));
  assert.deepEqual(await uids(site, { patient: 'NEW-1' }), [instance.studyInstanceUid]);
  assert.deepEqual(await uids(site, { patient: survivor }), [instance.studyInstanceUid]);
  assert.deepEqual(await uids(site, { patient: 'OLD-1' }), [instance.studyInstanceUid], 'the DICOM PatientID still finds it');
  const other = await createTestSite(db.database);
  await db.database.transaction((tx) => ensurePatient(tx, other, { resourceType: 'Patient', identifier: [{ value: 'NEW-1' }] }));
  assert.deepEqual(await uids(other, { patient: 'NEW-1' }), []);
});
