import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isDomainError } from '../../../src/domain/errors.ts';
import { indexInstance } from '../../../src/domain/imaging/index-instance.ts';
import { readProcedureStep, recordProcedureStep, type ProcedureStepInput, type RecordOptions } from '../../../src/domain/imaging/procedure-steps.ts';
import { getStudy } from '../../../src/domain/imaging/worklist.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance, uid } from './fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

function record(site: SiteContext, input: ProcedureStepInput, options?: RecordOptions) {
  return db.database.transaction((tx) => recordProcedureStep(tx, site, input, options));
}

test('IN PROGRESS then COMPLETED: created, then moved, with the optional attributes kept', async () => {
  const site = await createTestSite(db.database);
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  const startedAt = new Date('2026-01-02T10:00:00Z');
  const first = await record(site, {
    sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS', modality: 'ct', stationAeTitle: 'CT01', startedAt,
    procedureCode: { codeValue: 'CTHEAD', codingSchemeDesignator: 'LOCAL', codeMeaning: 'CT head' },
  });
  assert.equal(first.created, true);
  assert.equal(first.step.status, 'IN PROGRESS');
  assert.equal(first.step.modality, 'CT');
  assert.equal(first.step.studyIndexed, false);
  assert.equal(first.step.version, 1);
  assert.equal(first.step.source, 'operator');

  const endedAt = new Date('2026-01-02T10:20:00Z');
  const second = await record(site, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED', endedAt });
  assert.equal(second.created, false);
  assert.equal(second.changed, true);
  assert.equal(second.step.status, 'COMPLETED');
  assert.equal(second.step.version, 2);
  assert.equal(second.step.startedAt?.getTime(), startedAt.getTime());
  assert.equal(second.step.endedAt?.getTime(), endedAt.getTime());
  assert.deepEqual(second.step.procedureCode, { codeValue: 'CTHEAD', codingSchemeDesignator: 'LOCAL', codeMeaning: 'CT head' });
  assert.equal(second.step.stationAeTitle, 'CT01');
});

test('re-sending the current state is idempotent; a final state never changes', async () => {
  const site = await createTestSite(db.database);
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' });
  const again = await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' });
  assert.equal(again.changed, false);
  assert.equal(again.step.version, 1);

  await record(site, { sopInstanceUid, studyInstanceUid, status: 'DISCONTINUED' });
  const resent = await record(site, { sopInstanceUid, studyInstanceUid, status: 'DISCONTINUED' });
  assert.equal(resent.changed, false);
  assert.equal(resent.step.status, 'DISCONTINUED');

  for (const status of ['IN PROGRESS', 'COMPLETED'] as const) {
    await assert.rejects(record(site, { sopInstanceUid, studyInstanceUid, status }), (error) => isDomainError(error, 'conflict'));
  }
  // The same final state carrying a new attribute would change it: refused too.
  await assert.rejects(
    record(site, { sopInstanceUid, studyInstanceUid, status: 'DISCONTINUED', modality: 'MR' }),
    (error) => isDomainError(error, 'conflict'),
  );
  const stored = await readProcedureStep(db.database, site, sopInstanceUid);
  assert.equal(stored?.status, 'DISCONTINUED');
  assert.equal(stored?.modality, null);
});

test('IN PROGRESS updates attributes; a step cannot move to another study', async () => {
  const site = await createTestSite(db.database);
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' });
  const updated = await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS', stationAeTitle: 'MR2' });
  assert.equal(updated.changed, true);
  assert.equal(updated.step.stationAeTitle, 'MR2');
  await assert.rejects(
    record(site, { sopInstanceUid, studyInstanceUid: uid(), status: 'COMPLETED' }),
    (error) => isDomainError(error, 'conflict') && error.issues[0]?.location === 'studyInstanceUid',
  );
  await assert.rejects(
    record(site, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED', startedAt: new Date('2026-01-02T10:00:00Z'), endedAt: new Date('2026-01-01T10:00:00Z') }),
    (error) => isDomainError(error, 'invalid') && error.issues[0]?.location === 'endedAt',
  );
});

test('an end before a stored start is refused', async () => {
  const site = await createTestSite(db.database);
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS', startedAt: new Date('2026-01-02T10:00:00Z') });
  await assert.rejects(
    record(site, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED', endedAt: new Date('2026-01-02T09:00:00Z') }),
    (error) => isDomainError(error, 'invalid'),
  );
  assert.equal((await readProcedureStep(db.database, site, sopInstanceUid))?.status, 'IN PROGRESS');
});

test('create and update modes give the N-CREATE and N-SET semantics', async () => {
  const site = await createTestSite(db.database);
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  await assert.rejects(record(site, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED' }, { mode: 'update' }), (error) =>
    isDomainError(error, 'not-found'),
  );
  await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' }, { mode: 'create' });
  await assert.rejects(record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' }, { mode: 'create' }), (error) =>
    isDomainError(error, 'conflict'),
  );
  const set = await record(site, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED' }, { mode: 'update' });
  assert.equal(set.step.status, 'COMPLETED');
});

test('the step meets its study whether the images come before or after it', async () => {
  const site = await createTestSite(db.database);
  // Step first, images later.
  const early = receivedInstance();
  await record(site, { sopInstanceUid: uid(), studyInstanceUid: early.studyInstanceUid, status: 'IN PROGRESS' });
  await db.database.transaction((tx) => indexInstance(tx, site, early));
  const earlyStudy = await getStudy(db.database, site, early.studyInstanceUid);
  assert.equal(earlyStudy?.stepStatus, 'IN PROGRESS');
  assert.equal(earlyStudy?.procedureSteps[0]?.studyIndexed, true);

  // Images first, step later.
  const late = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, late));
  assert.equal((await getStudy(db.database, site, late.studyInstanceUid))?.stepStatus, null);
  await record(site, { sopInstanceUid: uid(), studyInstanceUid: late.studyInstanceUid, status: 'COMPLETED' });
  assert.equal((await getStudy(db.database, site, late.studyInstanceUid))?.stepStatus, 'COMPLETED');
});

test('concurrent updates of one step serialise through the state machine', async () => {
  const site = await createTestSite(db.database);
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  await record(site, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' });
  const outcomes = await Promise.allSettled([
    record(site, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED' }),
    record(site, { sopInstanceUid, studyInstanceUid, status: 'DISCONTINUED' }),
  ]);
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
  assert.ok(isDomainError(rejected.reason, 'conflict'));
});

test('steps are site-scoped: the same UID in another site is another step', async () => {
  const [a, b] = [await createTestSite(db.database), await createTestSite(db.database)];
  const [sopInstanceUid, studyInstanceUid] = [uid(), uid()];
  await record(a, { sopInstanceUid, studyInstanceUid, status: 'COMPLETED' });
  assert.equal(await readProcedureStep(db.database, b, sopInstanceUid), undefined);
  const inB = await record(b, { sopInstanceUid, studyInstanceUid, status: 'IN PROGRESS' });
  assert.equal(inB.created, true);
});

test('invalid input names the field', async () => {
  const site = await createTestSite(db.database);
  const valid: ProcedureStepInput = { sopInstanceUid: uid(), studyInstanceUid: uid(), status: 'IN PROGRESS' };
  const cases: [string, Partial<ProcedureStepInput> & Record<string, unknown>][] = [
    ['sopInstanceUid', { sopInstanceUid: 'abc' }],
    ['studyInstanceUid', { studyInstanceUid: '' }],
    ['status', { status: 'DONE' as never }],
    ['modality', { modality: 'not a modality!' }],
    ['stationAeTitle', { stationAeTitle: 'A'.repeat(17) }],
    ['stationAeTitle', { stationAeTitle: 'BAD\\AE' }],
    ['startedAt', { startedAt: new Date('nope') }],
    ['procedureCode.codeValue', { procedureCode: { codeValue: '' } }],
    ['procedureCode.codingSchemeDesignator', { procedureCode: { codeValue: 'X', codingSchemeDesignator: 'S'.repeat(17) } }],
  ];
  for (const [location, overrides] of cases) {
    await assert.rejects(
      record(site, { ...valid, ...overrides }),
      (error) => isDomainError(error, 'invalid') && error.issues.some((issue) => issue.location === location),
      location,
    );
  }
  assert.equal(await readProcedureStep(db.database, site, valid.sopInstanceUid), undefined);
});
