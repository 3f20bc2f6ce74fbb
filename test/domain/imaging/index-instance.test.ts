import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { findInstance, indexInstance, type ReceivedInstance } from '../../../src/domain/imaging/index-instance.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { getStudy, listWorklist } from '../../../src/domain/imaging/worklist.ts';
import { isDomainError } from '../../../src/domain/errors.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance, sha256, uid } from './fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

test('a new instance creates its study and series with the worklist attributes', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance();
  const result = await db.database.transaction((tx) => indexInstance(tx, site, instance));
  assert.equal(result.outcome, 'stored');
  assert.equal(result.storagePath, instance.storagePath);
  assert.equal(result.studyInstanceUid, instance.studyInstanceUid);

  const stored = await findInstance(db.database, site, instance.sopInstanceUid);
  assert.equal(stored?.id, result.instanceId);
  assert.equal(stored?.sha256, instance.sha256);
  assert.equal(stored?.sizeBytes, 9830);
  assert.equal(stored?.callingAeTitle, 'STORESCU');
  assert.equal(stored?.remoteAddress, '127.0.0.1');
  assert.equal(stored?.instanceNumber, 1);

  const study = await getStudy(db.database, site, instance.studyInstanceUid);
  assert.ok(study);
  assert.equal(study.dicomPatientId, '4MR1');
  assert.equal(study.patientName, 'CompressedSamples^MR1');
  assert.equal(study.patientDisplayName, 'CompressedSamples, MR1');
  assert.equal(study.patientBirthDate, '1970-01-01');
  assert.equal(study.patientSex, 'F');
  assert.equal(study.studyDate, '2004-08-26');
  assert.equal(study.studyTime, '18:50:59');
  assert.equal(study.accessionNumber, 'ACC1');
  assert.deepEqual(study.modalities, ['MR']);
  assert.equal(study.instanceCount, 1);
  assert.equal(study.seriesCount, 1);
  assert.equal(study.series[0]?.seriesNumber, 1);
  assert.equal(study.series[0]?.seriesDescription, 'T1');
});

test('the same instance sent again with the same bytes succeeds and changes nothing', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance();
  const first = await db.database.transaction((tx) => indexInstance(tx, site, instance));
  const again = await db.database.transaction((tx) =>
    indexInstance(tx, site, { ...instance, storagePath: 'dicom/other-copy.dcm', callingAeTitle: 'OTHER' }),
  );
  assert.equal(again.outcome, 'duplicate-identical');
  assert.equal(again.instanceId, first.instanceId);
  assert.equal(again.storagePath, instance.storagePath, 'the kept file is the first one');
  const stored = await findInstance(db.database, site, instance.sopInstanceUid);
  assert.equal(stored?.callingAeTitle, 'STORESCU');
  const { total, studies } = await listWorklist(db.database, site, { limit: 10, offset: 0 });
  assert.equal(total, 1);
  assert.equal(studies[0]?.instanceCount, 1);
});

test('the same SOP Instance UID with different bytes keeps the first instance', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  const different = await db.database.transaction((tx) =>
    indexInstance(tx, site, { ...instance, sha256: sha256('other bytes'), storagePath: 'dicom/second.dcm', sizeBytes: 1 }),
  );
  assert.equal(different.outcome, 'duplicate-different');
  assert.equal(different.storagePath, instance.storagePath);
  const stored = await findInstance(db.database, site, instance.sopInstanceUid);
  assert.equal(stored?.sha256, instance.sha256);
  assert.equal(stored?.sizeBytes, 9830);
});

test('concurrent stores of one SOP Instance UID index it once', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance();
  const results = await Promise.all(
    Array.from({ length: 6 }, () => db.database.transaction((tx) => indexInstance(tx, site, instance))),
  );
  assert.deepEqual(results.map((r) => r.outcome).sort(), ['duplicate-identical', 'duplicate-identical', 'duplicate-identical', 'duplicate-identical', 'duplicate-identical', 'stored']);
  assert.equal(new Set(results.map((r) => r.instanceId)).size, 1);
});

test('concurrent instances of one study all land in it', async () => {
  const site = await createTestSite(db.database);
  const studyInstanceUid = uid();
  const seriesInstanceUid = uid();
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, n) =>
      db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ studyInstanceUid, seriesInstanceUid, instanceNumber: String(n + 1) }))),
    ),
  );
  assert.ok(results.every((r) => r.outcome === 'stored'));
  const study = await getStudy(db.database, site, studyInstanceUid);
  assert.equal(study?.instanceCount, 8);
  assert.equal(study?.seriesCount, 1);
  assert.equal(study?.sizeBytes, 8 * 9830);
});

test('every instance is indexed with its study and series, also when first instances of new studies arrive together', async () => {
  // The instance rows carry no foreign key to their study and series (migration 0502): the claim
  // statement, or the upsert after it, must leave both rows behind in every interleaving.
  const site = await createTestSite(db.database);
  const studies = Array.from({ length: 3 }, () => ({ studyInstanceUid: uid(), series: [uid(), uid()] }));
  const results = await Promise.all(
    Array.from({ length: 24 }, (_, n) => {
      const study = studies[n % studies.length]!;
      const seriesInstanceUid = study.series[Math.floor(n / studies.length) % 2]!;
      return db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ studyInstanceUid: study.studyInstanceUid, seriesInstanceUid })));
    }),
  );
  assert.ok(results.every((r) => r.outcome === 'stored'));
  const { rows } = await db.database.query(
    `SELECT count(*)::int AS instances,
            count(*) FILTER (WHERE st.study_instance_uid IS NULL OR se.series_instance_uid IS NULL
                               OR se.study_instance_uid <> i.study_instance_uid)::int AS without_parents
     FROM imaging_instance i
     LEFT JOIN imaging_study st ON st.site_id = i.site_id AND st.study_instance_uid = i.study_instance_uid
     LEFT JOIN imaging_series se ON se.site_id = i.site_id AND se.series_instance_uid = i.series_instance_uid
     WHERE i.site_id = $1`,
    [site.siteId],
  );
  assert.deepEqual(rows[0], { instances: 24, without_parents: 0 });
});

test('study attributes come from the first instance; later ones only fill gaps; modalities accumulate', async () => {
  const site = await createTestSite(db.database);
  const studyInstanceUid = uid();
  await db.database.transaction((tx) =>
    indexInstance(tx, site, receivedInstance({ studyInstanceUid, studyDescription: undefined, accessionNumber: '', modality: 'CT' })),
  );
  const second = await db.database.transaction((tx) =>
    indexInstance(tx, site, receivedInstance({ studyInstanceUid, patientId: 'OTHER', studyDescription: 'Filled later', accessionNumber: 'A2', modality: 'SR' })),
  );
  assert.equal(second.outcome, 'stored');
  assert.match(second.warnings[0] ?? '', /PatientID 4MR1/);
  const study = await getStudy(db.database, site, studyInstanceUid);
  assert.equal(study?.dicomPatientId, '4MR1');
  assert.equal(study?.studyDescription, 'Filled later');
  assert.equal(study?.accessionNumber, 'A2');
  assert.deepEqual(study?.modalities, ['CT', 'SR']);
  assert.equal(study?.seriesCount, 2);
});

test('malformed descriptive values are indexed as absent, not refused', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance({
    studyDate: '20041332',
    studyTime: '25',
    patientBirthDate: 'unknown',
    patientSex: 'X',
    seriesNumber: '1.5',
    instanceNumber: '99999999999',
    modality: 'm r!',
    patientName: '^^^^',
    studyDescription: `  padded\u0000 `,
  });
  const result = await db.database.transaction((tx) => indexInstance(tx, site, instance));
  assert.equal(result.outcome, 'stored');
  // Each value indexed otherwise than sent is a finding (the listener answers a warning for them).
  assert.deepEqual(
    result.findings.map((finding) => finding.attribute),
    ['PatientBirthDate', 'PatientSex', 'StudyDate', 'StudyTime', 'Modality', 'SeriesNumber', 'InstanceNumber'],
  );
  const study = await getStudy(db.database, site, instance.studyInstanceUid);
  assert.equal(study?.studyDate, null);
  assert.equal(study?.studyTime, null);
  assert.equal(study?.patientBirthDate, null);
  assert.equal(study?.patientSex, null);
  assert.equal(study?.patientName, '^^^^');
  assert.equal(study?.patientDisplayName, null);
  assert.equal(study?.studyDescription, 'padded');
  assert.deepEqual(study?.modalities, []);
  assert.equal(study?.series[0]?.seriesNumber, null);
  assert.equal((await findInstance(db.database, site, instance.sopInstanceUid))?.instanceNumber, null);
});

/** Each case is refused as invalid, with an issue at its location. */
async function assertRefused(site: SiteContext, cases: [string, Partial<ReceivedInstance>][]): Promise<void> {
  for (const [location, overrides] of cases) {
    await assert.rejects(
      db.database.transaction((tx) => indexInstance(tx, site, receivedInstance(overrides))),
      (error) => isDomainError(error, 'invalid') && error.issues.some((issue) => issue.location === location),
      location,
    );
  }
}

test('a conforming instance has no findings', async () => {
  const site = await createTestSite(db.database);
  const result = await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance()));
  assert.deepEqual(result.findings, []);
});

test('identifiers are kept exactly: over their VR length in full with a finding, never cut, never merged', async () => {
  const site = await createTestSite(db.database);
  const prefix = 'X'.repeat(64);
  const results = [];
  for (const patientId of [`${prefix}1`, `${prefix}2`]) {
    results.push(await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId, accessionNumber: `${patientId}-ACC` }))));
  }
  assert.notEqual(results[0]!.patientId, results[1]!.patientId);
  assert.deepEqual(results[0]!.findings, [
    { attribute: 'PatientID', problem: "65 characters, over its VR's 64: kept in full" },
    { attribute: 'AccessionNumber', problem: "69 characters, over its VR's 16: kept in full" },
  ]);
  const study = await getStudy(db.database, site, results[1]!.studyInstanceUid);
  assert.equal(study?.dicomPatientId, `${prefix}2`);
  assert.equal(study?.accessionNumber, `${prefix}2-ACC`);
});

test('an identifier the index cannot hold as it is refuses the instance: control characters (NUL inside too), over 256 characters', async () => {
  const site = await createTestSite(db.database);
  const cases: [string, Partial<ReceivedInstance>][] = [
    ['PatientID', { patientId: 'AB\u0000CD' }],
    ['PatientID', { patientId: 'AB\u001bCD' }],
    ['PatientID', { patientId: 'P'.repeat(257) }],
    ['AccessionNumber', { accessionNumber: 'A\tB' }],
  ];
  await assertRefused(site, cases);
  // Padding is not part of the value: trailing NUL and spaces, leading spaces.
  const padded = await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ patientId: ' ABCD \u0000' })));
  assert.equal((await getStudy(db.database, site, padded.studyInstanceUid))?.dicomPatientId, 'ABCD');
  assert.deepEqual(padded.findings, []);
});

test('descriptive text is never refused: control characters are replaced, text beyond 1024 characters is cut, each with a finding', async () => {
  const site = await createTestSite(db.database);
  const result = await db.database.transaction((tx) =>
    indexInstance(tx, site, receivedInstance({ patientName: 'Doe\u0001^Jane', studyDescription: 'Line one\r\nLine two', seriesDescription: 'S'.repeat(1500) })),
  );
  const study = await getStudy(db.database, site, result.studyInstanceUid);
  assert.equal(study?.patientName, 'Doe\ufffd^Jane');
  assert.equal(study?.studyDescription, 'Line one  Line two');
  assert.equal(study?.series[0]?.seriesDescription, 'S'.repeat(1024));
  assert.deepEqual(
    result.findings.map((finding) => `${finding.attribute}: ${finding.problem}`),
    [
      'PatientName: holds control characters: indexed with them replaced',
      'StudyDescription: holds control characters: indexed with them replaced',
      'SeriesDescription: 1500 characters: indexed cut at 1024',
    ],
  );
});

test('identifying values that the index cannot key on are refused', async () => {
  const site = await createTestSite(db.database);
  const cases: [string, Partial<ReceivedInstance>][] = [
    ['sopInstanceUid', { sopInstanceUid: '' }],
    ['sopInstanceUid', { sopInstanceUid: '1.2.abc' }],
    ['studyInstanceUid', { studyInstanceUid: `1.${'2'.repeat(70)}` }],
    ['seriesInstanceUid', { seriesInstanceUid: '1.2 3' }],
    ['sopClassUid', { sopClassUid: 'MR' }],
    ['transferSyntaxUid', { transferSyntaxUid: '' }],
    ['storagePath', { storagePath: '/etc/passwd' }],
    ['storagePath', { storagePath: 'dicom/../../escape.dcm' }],
    ['storagePath', { storagePath: '' }],
    ['sizeBytes', { sizeBytes: -1 }],
    ['sizeBytes', { sizeBytes: 1.5 }],
    ['sha256', { sha256: 'abc' }],
  ];
  await assertRefused(site, cases);
  assert.equal((await listWorklist(db.database, site, { limit: 10, offset: 0 })).total, 0);
});

test('a UID padded with a trailing NUL, as DICOM pads UIDs, is the same UID', async () => {
  const site = await createTestSite(db.database);
  const instance = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, { ...instance, sopInstanceUid: `${instance.sopInstanceUid}\u0000` }));
  assert.ok(await findInstance(db.database, site, instance.sopInstanceUid));
});

test('a series already indexed under another study is refused and nothing is written', async () => {
  const site = await createTestSite(db.database);
  const first = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, first));
  const stray = receivedInstance({ seriesInstanceUid: first.seriesInstanceUid });
  await assert.rejects(
    db.database.transaction((tx) => indexInstance(tx, site, stray)),
    (error) => isDomainError(error, 'invalid') && /belongs to study/.test(error.message),
  );
  assert.equal(await findInstance(db.database, site, stray.sopInstanceUid), undefined);
  assert.equal(await getStudy(db.database, site, stray.studyInstanceUid), undefined);
});

test('the same UIDs in two sites are two independent instances', async () => {
  const [a, b] = [await createTestSite(db.database), await createTestSite(db.database)];
  const instance = receivedInstance();
  const inA = await db.database.transaction((tx) => indexInstance(tx, a, instance));
  const inB = await db.database.transaction((tx) => indexInstance(tx, b, { ...instance, sha256: sha256('b') }));
  assert.equal(inA.outcome, 'stored');
  assert.equal(inB.outcome, 'stored');
  assert.notEqual(inA.instanceId, inB.instanceId);
  assert.equal((await findInstance(db.database, a, instance.sopInstanceUid))?.sha256, instance.sha256);
  assert.equal((await findInstance(db.database, b, instance.sopInstanceUid))?.sha256, sha256('b'));
  const c = await createTestSite(db.database);
  assert.equal(await findInstance(db.database, c, instance.sopInstanceUid), undefined);
  assert.equal(await getStudy(db.database, c, instance.studyInstanceUid), undefined);
});

test('an instance that brings nothing new to its study locks nothing; one with a new modality, or a second later, updates the study', async () => {
  const site = await createTestSite(db.database);
  const first = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, site, first));
  const same = { studyInstanceUid: first.studyInstanceUid, seriesInstanceUid: first.seriesInstanceUid };
  // Received "just now" for the next minute, however slow the machine running this test.
  await db.database.query("UPDATE imaging_study SET last_received_at = now() + interval '1 minute' WHERE site_id = $1", [site.siteId]);
  // Another session holds the study's and the series' rows as an UPDATE does (a concurrent store's).
  const holder = await db.database.pool.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM imaging_study WHERE site_id = $1 AND study_instance_uid = $2 FOR NO KEY UPDATE', [site.siteId, first.studyInstanceUid]);
    await holder.query('SELECT 1 FROM imaging_series WHERE site_id = $1 AND series_instance_uid = $2 FOR NO KEY UPDATE', [site.siteId, first.seriesInstanceUid]);
    const indexWithin = (instance: ReturnType<typeof receivedInstance>) =>
      db.database.transaction(async (tx) => {
        await tx.query("SET LOCAL lock_timeout = '300ms'");
        return indexInstance(tx, site, instance);
      });
    const quiet = await indexWithin(receivedInstance(same));
    assert.equal(quiet.outcome, 'stored', 'nothing to change: the held rows are not waited for');
    await assert.rejects(indexWithin(receivedInstance({ ...same, modality: 'CT' })), /lock timeout/, 'a new modality updates the study row');
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ ...same, modality: 'CT' })));
  await db.database.query("UPDATE imaging_study SET last_received_at = now() - interval '5 seconds' WHERE site_id = $1", [site.siteId]);
  const before = (await getStudy(db.database, site, first.studyInstanceUid))!;
  assert.deepEqual([...before.modalities].sort(), ['CT', 'MR']);
  await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance(same)));
  const after = (await getStudy(db.database, site, first.studyInstanceUid))!;
  assert.ok(after.lastReceivedAt.getTime() > before.lastReceivedAt.getTime() + 4000, 'last received moves on once it is a second old');
});

test('an instance whose study is created by a transaction committing under it still finds the study', async () => {
  const site = await createTestSite(db.database);
  const same = { studyInstanceUid: uid(), seriesInstanceUid: uid() };
  let commitFirst!: () => void;
  const held = new Promise<void>((resolve) => (commitFirst = resolve));
  let firstIndexed!: () => void;
  const indexedFirst = new Promise<void>((resolve) => (firstIndexed = resolve));
  // The first instance of the study, its transaction held open once its rows are written.
  const first = db.database.transaction(async (tx) => {
    const result = await indexInstance(tx, site, receivedInstance(same));
    firstIndexed();
    await held;
    return result;
  });
  try {
    await indexedFirst;
    // The second waits on the first's uncommitted study row, having read the tables before that commit.
    const second = db.database.transaction((tx) => indexInstance(tx, site, receivedInstance(same)));
    for (let attempt = 0; ; attempt++) {
      const { rows } = await db.database.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      if (rows[0].n > 0) break;
      assert.ok(attempt < 400, 'the second instance never waited for the first');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    commitFirst();
    assert.equal((await second).outcome, 'stored');
  } finally {
    commitFirst();
  }
  assert.equal((await first).outcome, 'stored');
  assert.equal((await getStudy(db.database, site, same.studyInstanceUid))?.instanceCount, 2);
});
