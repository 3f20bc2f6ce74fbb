import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { isDomainError } from '../../../src/domain/errors.ts';
import { indexInstance } from '../../../src/domain/imaging/index-instance.ts';
import { ensurePatient } from '../../../src/domain/patients/demographics.ts';
import { reassignImagingPatient } from '../../../src/domain/imaging/reassign-patient.ts';
import { completeReport, createReport, readReport, searchReports, updateDraft } from '../../../src/domain/imaging/reports.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance } from './fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function studyIn(site: SiteContext, overrides: Parameters<typeof receivedInstance>[0] = {}): Promise<string> {
  const instance = receivedInstance(overrides);
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  return instance.studyInstanceUid;
}

async function userIn(site: SiteContext): Promise<string> {
  const id = randomUUID();
  await db.database.query(`INSERT INTO app_user (id, site_id, email, role) VALUES ($1, $2, $3, 'clinician')`, [id, site.siteId, `${id}@example.org`]);
  return id;
}

/** A patient of the site (as HL7 ADT would create it). */
async function patientIn(site: SiteContext): Promise<string> {
  const { patientId } = await db.database.transaction((tx) => ensurePatient(tx, site, { resourceType: 'Patient', identifier: [{ value: randomUUID() }] }));
  return patientId;
}

/** Points a study at another patient of its site, as a merge would. */
async function linkStudy(site: SiteContext, studyInstanceUid: string, patientId: string): Promise<void> {
  await db.database.query('UPDATE imaging_study SET patient_id = $3 WHERE site_id = $1 AND study_instance_uid = $2', [site.siteId, studyInstanceUid, patientId]);
}

test('a draft is edited, then completed with its author and time, then frozen', async () => {
  const site = await createTestSite(db.database);
  const author = await userIn(site);
  const studyInstanceUid = await studyIn(site);
  const draft = await createReport(db.database, site, { studyInstanceUid, text: 'Preliminary' });
  assert.equal(draft.status, 'draft');
  assert.equal(draft.completedAt, null);
  assert.equal(draft.authorUserId, null);
  assert.equal(draft.studyDate, '2004-08-26');
  assert.equal(draft.studyDescription, 'MR brain');
  assert.equal(draft.version, 1);

  const edited = await updateDraft(db.database, site, draft.id, { text: 'No acute findings.' });
  assert.equal(edited.text, 'No acute findings.');
  assert.equal(edited.version, 2);

  const completed = await completeReport(db.database, site, draft.id, { authorUserId: author });
  assert.equal(completed.status, 'completed');
  assert.equal(completed.authorUserId, author);
  assert.ok(completed.completedAt instanceof Date);
  assert.equal(completed.text, 'No acute findings.');

  await assert.rejects(updateDraft(db.database, site, draft.id, { text: 'changed' }), (error) => isDomainError(error, 'conflict'));
  await assert.rejects(completeReport(db.database, site, draft.id, { text: 'changed' }), (error) => isDomainError(error, 'conflict'));
  assert.equal((await readReport(db.database, site, draft.id))?.text, 'No acute findings.');
});

test('a report created completed records its author from the acting user', async () => {
  const base = await createTestSite(db.database);
  const userId = await userIn(base);
  const site: SiteContext = { ...base, actor: { kind: 'user', userId } };
  const report = await createReport(db.database, site, { studyInstanceUid: await studyIn(site), text: 'Final', status: 'completed' });
  assert.equal(report.status, 'completed');
  assert.equal(report.authorUserId, userId);
  assert.ok(report.completedAt);
});

test('a stale version is a failed precondition', async () => {
  const site = await createTestSite(db.database);
  const draft = await createReport(db.database, site, { studyInstanceUid: await studyIn(site), text: 'v1' });
  await updateDraft(db.database, site, draft.id, { text: 'v2', expectedVersion: 1 });
  await assert.rejects(updateDraft(db.database, site, draft.id, { text: 'v3', expectedVersion: 1 }), (error) =>
    isDomainError(error, 'precondition-failed'),
  );
  await assert.rejects(completeReport(db.database, site, draft.id, { expectedVersion: 1 }), (error) => isDomainError(error, 'precondition-failed'));
});

test('bad report input is refused with its reason', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const studyInstanceUid = await studyIn(site);
  const strangerId = await userIn(other);
  const cases: [string, () => Promise<unknown>][] = [
    ['not-found', () => createReport(db.database, site, { studyInstanceUid: '1.2.3.4', text: 'x' })],
    ['not-found', () => createReport(db.database, other, { studyInstanceUid, text: 'x' })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: '   ', status: 'completed' })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: 'a\u0000b' })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: 42 as never })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: 'x', status: 'final' as never })],
    ['too-large', () => createReport(db.database, site, { studyInstanceUid, text: 'x'.repeat(100_001) })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: 'x', authorUserId: randomUUID() })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: 'x', authorUserId: 'not-a-uuid' })],
    ['invalid', () => createReport(db.database, site, { studyInstanceUid, text: 'x', authorUserId: strangerId })],
    ['not-found', () => updateDraft(db.database, site, 'not-a-uuid', { text: 'x' })],
    ['not-found', () => completeReport(db.database, site, randomUUID())],
  ];
  for (const [code, attempt] of cases) {
    await assert.rejects(attempt(), (error) => isDomainError(error, code as never));
  }
  assert.equal((await searchReports(db.database, site, { limit: 10, offset: 0 })).total, 0);
});

test('another site cannot read, edit or complete a report', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const draft = await createReport(db.database, site, { studyInstanceUid: await studyIn(site), text: 'mine' });
  assert.equal(await readReport(db.database, other, draft.id), undefined);
  await assert.rejects(updateDraft(db.database, other, draft.id, { text: 'theirs' }), (error) => isDomainError(error, 'not-found'));
  await assert.rejects(completeReport(db.database, other, draft.id), (error) => isDomainError(error, 'not-found'));
  assert.equal((await searchReports(db.database, other, { ids: [draft.id], limit: 10, offset: 0 })).total, 0);
  assert.equal((await readReport(db.database, site, draft.id))?.text, 'mine');
});

test('search by id, patient and status, paged, with the total', async () => {
  const site = await createTestSite(db.database);
  const [patientA, patientB] = [await patientIn(site), await patientIn(site)];
  const studyA = await studyIn(site);
  const studyB = await studyIn(site);
  await linkStudy(site, studyA, patientA);
  await linkStudy(site, studyB, patientB);
  const a1 = await createReport(db.database, site, { studyInstanceUid: studyA, text: 'a1', status: 'completed' });
  const a2 = await createReport(db.database, site, { studyInstanceUid: studyA, text: 'a2' });
  const b1 = await createReport(db.database, site, { studyInstanceUid: studyB, text: 'b1' });

  const byPatient = await searchReports(db.database, site, { patientIds: [patientA], limit: 10, offset: 0 });
  assert.deepEqual(byPatient.reports.map((r) => r.id).sort(), [a1.id, a2.id].sort());
  assert.ok(byPatient.reports.every((r) => r.patientId === patientA));
  const finals = await searchReports(db.database, site, { statuses: ['completed'], limit: 10, offset: 0 });
  assert.deepEqual(finals.reports.map((r) => r.id), [a1.id]);
  const drafts = await searchReports(db.database, site, { patientIds: [patientA, patientB], statuses: ['draft'], limit: 10, offset: 0 });
  assert.deepEqual(drafts.reports.map((r) => r.id).sort(), [a2.id, b1.id].sort());
  const byIds = await searchReports(db.database, site, { ids: [b1.id, 'garbage', randomUUID()], limit: 10, offset: 0 });
  assert.deepEqual(byIds.reports.map((r) => r.id), [b1.id]);
  assert.equal((await searchReports(db.database, site, { ids: [], limit: 10, offset: 0 })).total, 0);

  const page1 = await searchReports(db.database, site, { limit: 2, offset: 0 });
  const page2 = await searchReports(db.database, site, { limit: 2, offset: 2 });
  assert.equal(page1.total, 3);
  assert.equal(page2.total, 3);
  assert.equal(page1.reports.length + page2.reports.length, 3);
  assert.equal((await searchReports(db.database, site, { limit: 2, offset: 10 })).total, 3);
  assert.equal((await searchReports(db.database, site, { limit: 0, offset: 0 })).total, 3);
});

test('a patient merge moves studies, and their reports with them, within the site only', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const [from, to, bystander] = [await patientIn(site), await patientIn(site), await patientIn(site)];
  const study1 = await studyIn(site);
  const study2 = await studyIn(site);
  const untouched = await studyIn(site);
  await linkStudy(site, study1, from);
  await linkStudy(site, study2, from);
  await linkStudy(site, untouched, bystander);
  const report = await createReport(db.database, site, { studyInstanceUid: study1, text: 'r' });
  assert.equal(report.patientId, from);

  // Another site's merge with the same ids touches nothing here.
  assert.equal(await db.database.transaction((tx) => reassignImagingPatient(tx, other, from, to)), 0);
  assert.equal((await readReport(db.database, site, report.id))?.patientId, from);

  const moved = await db.database.transaction((tx) => reassignImagingPatient(tx, site, from, to));
  assert.equal(moved, 2);
  assert.equal((await readReport(db.database, site, report.id))?.patientId, to);
  assert.equal((await searchReports(db.database, site, { patientIds: [from], limit: 10, offset: 0 })).total, 0);
  assert.equal((await searchReports(db.database, site, { patientIds: [to], limit: 10, offset: 0 })).total, 1);
  const { rows } = await db.database.query('SELECT patient_id FROM imaging_study WHERE site_id = $1 AND study_instance_uid = $2', [site.siteId, untouched]);
  assert.equal(rows[0]?.patient_id, bystander);
  assert.equal(await db.database.transaction((tx) => reassignImagingPatient(tx, site, to, to)), 0);
  await assert.rejects(db.database.transaction((tx) => reassignImagingPatient(tx, site, 'x', to)), (error) => isDomainError(error, 'invalid'));
});

test("a study cannot be pointed at another site's patient", async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const study = await studyIn(site);
  const foreign = await patientIn(other);
  await assert.rejects(linkStudy(site, study, foreign), /imaging_study_patient_fkey/);
});

test('an edit racing a completion never changes a completed report behind its author', async () => {
  const site = await createTestSite(db.database);
  const author = await userIn(site);
  for (let round = 0; round < 6; round++) {
    const draft = await createReport(db.database, site, { studyInstanceUid: await studyIn(site), text: 'first text' });
    const [edit, completion] = await Promise.allSettled([
      updateDraft(db.database, site, draft.id, { text: 'edited text' }),
      completeReport(db.database, site, draft.id, { authorUserId: author }),
    ]);
    const stored = await readReport(db.database, site, draft.id);
    if (completion.status === 'fulfilled') {
      // Completed: the stored text is exactly the text the completion returned, whichever order
      // the two ran in; an edit that came second was refused.
      assert.equal(stored?.status, 'completed');
      assert.equal(stored?.text, completion.value.text);
      if (completion.value.text === 'first text') assert.ok(edit.status === 'rejected' && isDomainError(edit.reason, 'conflict'));
    } else {
      // The completion lost the race to the edit: it is refused rather than completing unseen text.
      assert.ok(isDomainError(completion.reason, 'precondition-failed'));
      assert.equal(edit.status, 'fulfilled');
      assert.equal(stored?.status, 'draft');
      assert.equal(stored?.text, 'edited text');
    }
  }
});

test('creation and completion are in the audit log with the actor', async () => {
  const base = await createTestSite(db.database);
  const userId = await userIn(base);
  const site: SiteContext = { ...base, actor: { kind: 'user', userId } };
  const draft = await createReport(db.database, site, { studyInstanceUid: await studyIn(site), text: 'x' });
  await completeReport(db.database, site, draft.id);
  const { rows } = await db.database.query('SELECT action, actor FROM audit_event WHERE site_id = $1 AND target_id = $2 ORDER BY id', [site.siteId, draft.id]);
  assert.deepEqual(rows, [
    { action: 'report.create', actor: `user:${userId}` },
    { action: 'report.complete', actor: `user:${userId}` },
  ]);
});
