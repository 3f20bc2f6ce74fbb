import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isDomainError } from '../../../src/domain/errors.ts';
import { indexInstance, type ReceivedInstance } from '../../../src/domain/imaging/index-instance.ts';
import { queryImaging, type ImagingQuery, type MatchingKeys } from '../../../src/domain/imaging/query/imaging-query.ts';
import { countRetrievable, retrievableInstances } from '../../../src/domain/imaging/query/retrievable.ts';
import type { SiteContext } from '../../../src/domain/site-context.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance, uid } from './fixtures.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function store(site: SiteContext, overrides: Partial<ReceivedInstance>): Promise<ReceivedInstance> {
  const instance = receivedInstance(overrides);
  await db.database.transaction((tx) => indexInstance(tx, site, instance));
  return instance;
}

async function studies(site: SiteContext, keys: MatchingKeys, extra: Partial<ImagingQuery> = {}): Promise<string[]> {
  const { matches } = await queryImaging(db.database, site, { level: 'STUDY', keys, ...extra });
  return matches.map((match) => match.studyInstanceUid!);
}

test('study level: PS3.4 C.2.2.2 single value, wildcard, range, list and multi-code matching', async () => {
  const site = await createTestSite(db.database);
  const a = await store(site, { patientId: 'P-1', patientName: 'Doe^Jane', studyDate: '20260110', studyTime: '083000', accessionNumber: 'A1', modality: 'CT', studyDescription: 'CT Chest' });
  const b = await store(site, { patientId: 'P-2', patientName: 'DOE^JOHN', studyDate: '20260115', studyTime: '143015.25', accessionNumber: 'A2', modality: 'MR', studyDescription: 'MR Brain', studyId: 'S-42', referringPhysicianName: 'Welby^Marcus' });
  const c = await store(site, { patientId: 'P_3', patientName: 'Roe^Richard', studyDate: '20251231', studyTime: '235959', accessionNumber: 'A3', modality: 'US', studyDescription: 'US Abdomen' });
  await store(site, { studyInstanceUid: b.studyInstanceUid, seriesInstanceUid: uid(), modality: 'SR', seriesNumber: '2' });

  assert.deepEqual(await studies(site, {}), [b.studyInstanceUid, a.studyInstanceUid, c.studyInstanceUid], 'universal matching, newest first');
  assert.deepEqual(await studies(site, { PatientID: '*' }), [b.studyInstanceUid, a.studyInstanceUid, c.studyInstanceUid]);
  assert.deepEqual(await studies(site, { PatientID: 'P-1' }), [a.studyInstanceUid]);
  assert.deepEqual(await studies(site, { PatientID: 'p-1' }), [], 'PatientID matches case-sensitively');
  assert.deepEqual(await studies(site, { PatientID: 'P_?' }), [c.studyInstanceUid], "'_' is literal, '?' one character");
  assert.deepEqual(await studies(site, { PatientName: 'doe*' }), [b.studyInstanceUid, a.studyInstanceUid], 'names match case-insensitively');
  assert.deepEqual(await studies(site, { PatientName: 'Doe^J?ne' }), [a.studyInstanceUid]);
  assert.deepEqual(await studies(site, { PatientName: 'Doe' }), [], 'without a wildcard the whole name must match');
  assert.deepEqual(await studies(site, { StudyDate: '20260110' }), [a.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyDate: '20260101-' }), [b.studyInstanceUid, a.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyDate: '-20260110' }), [a.studyInstanceUid, c.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyDate: '20260111-20260115' }), [b.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyTime: '14-' }), [b.studyInstanceUid, c.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyTime: '-0830' }), [a.studyInstanceUid], 'a partial upper bound reaches the end of its minute');
  assert.deepEqual(await studies(site, { AccessionNumber: 'A2' }), [b.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyDescription: '*brain*' }), [b.studyInstanceUid]);
  assert.deepEqual(await studies(site, { ModalitiesInStudy: 'SR' }), [b.studyInstanceUid]);
  assert.deepEqual(await studies(site, { ModalitiesInStudy: 'CT\\US' }), [a.studyInstanceUid, c.studyInstanceUid]);
  assert.deepEqual(await studies(site, { StudyInstanceUID: `${c.studyInstanceUid}\\${a.studyInstanceUid}` }), [a.studyInstanceUid, c.studyInstanceUid]);
  assert.deepEqual(await studies(site, { PatientName: '100%' }), [], 'LIKE metacharacters are literal');
  assert.deepEqual(await studies(site, { StudyID: 'S-4?' }), [b.studyInstanceUid]);
  assert.deepEqual(await studies(site, { ReferringPhysicianName: 'welby*' }), [b.studyInstanceUid]);

  const { matches } = await queryImaging(db.database, site, { level: 'STUDY', keys: { StudyInstanceUID: b.studyInstanceUid } });
  assert.deepEqual(matches[0], {
    patientId: 'P-2',
    patientName: 'DOE^JOHN',
    patientBirthDate: '19700101',
    patientSex: 'F',
    studyInstanceUid: b.studyInstanceUid,
    studyDate: '20260115',
    studyTime: '143015.25',
    accessionNumber: 'A2',
    studyDescription: 'MR Brain',
    studyId: 'S-42',
    referringPhysicianName: 'Welby^Marcus',
    modalitiesInStudy: ['MR', 'SR'],
    numberOfStudyRelatedSeries: 2,
    numberOfStudyRelatedInstances: 2,
  });
});

test('series and instance level, with the keys of the levels above', async () => {
  const site = await createTestSite(db.database);
  const first = await store(site, { modality: 'CT', seriesNumber: '3', instanceNumber: '2' });
  const second = await store(site, { studyInstanceUid: first.studyInstanceUid, seriesInstanceUid: first.seriesInstanceUid, instanceNumber: '1', sopClassUid: '1.2.840.10008.5.1.4.1.1.2' });
  const other = await store(site, { studyInstanceUid: first.studyInstanceUid, modality: 'SR', seriesNumber: '1' });

  const series = await queryImaging(db.database, site, { level: 'SERIES', keys: { StudyInstanceUID: first.studyInstanceUid } });
  assert.deepEqual(series.matches.map((m) => [m.seriesNumber, m.modality, m.numberOfSeriesRelatedInstances]), [[1, 'SR', 1], [3, 'CT', 2]]);
  assert.equal(series.matches[0]!.studyInstanceUid, first.studyInstanceUid);
  assert.deepEqual((await queryImaging(db.database, site, { level: 'SERIES', keys: { Modality: 'CT' } })).matches.map((m) => m.seriesInstanceUid), [first.seriesInstanceUid]);
  assert.deepEqual((await queryImaging(db.database, site, { level: 'SERIES', keys: { SeriesNumber: '1' } })).matches.map((m) => m.seriesInstanceUid), [other.seriesInstanceUid]);

  const images = await queryImaging(db.database, site, { level: 'IMAGE', keys: { SeriesInstanceUID: first.seriesInstanceUid } });
  assert.deepEqual(images.matches.map((m) => m.sopInstanceUid), [second.sopInstanceUid, first.sopInstanceUid], 'by InstanceNumber');
  assert.equal(images.matches[0]!.transferSyntaxUid, '1.2.840.10008.1.2.1');
  const byClass = await queryImaging(db.database, site, { level: 'IMAGE', keys: { SOPClassUID: '1.2.840.10008.5.1.4.1.1.2' } });
  assert.deepEqual(byClass.matches.map((m) => m.sopInstanceUid), [second.sopInstanceUid]);
  const byNumber = await queryImaging(db.database, site, { level: 'IMAGE', keys: { InstanceNumber: '2', PatientID: '4MR1' } });
  assert.deepEqual(byNumber.matches.map((m) => m.sopInstanceUid), [first.sopInstanceUid]);
  const patients = await queryImaging(db.database, site, { level: 'PATIENT', keys: { PatientID: '4MR1' } });
  assert.deepEqual(patients.matches, [{ patientId: '4MR1', patientName: 'CompressedSamples^MR1', patientBirthDate: '19700101', patientSex: 'F', numberOfPatientRelatedStudies: 1 }]);
});

test("another site's studies are never matched, and results are bounded", async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const theirs = await store(other, { patientId: 'SHARED' });
  assert.deepEqual(await studies(site, { StudyInstanceUID: theirs.studyInstanceUid }), []);
  assert.deepEqual(await studies(site, { PatientID: 'SHARED' }), []);
  assert.equal(await countRetrievable(db.database, site, { studyInstanceUids: theirs.studyInstanceUid }), 0);

  for (let i = 0; i < 3; i++) await store(site, { patientId: 'MANY', studyDate: `2026010${i + 1}` });
  const page = await queryImaging(db.database, site, { level: 'STUDY', keys: { PatientID: 'MANY' }, limit: 2 });
  assert.equal(page.matches.length, 2);
  assert.equal(page.more, true);
  const rest = await queryImaging(db.database, site, { level: 'STUDY', keys: { PatientID: 'MANY' }, limit: 2, offset: 2 });
  assert.deepEqual([rest.matches.length, rest.more], [1, false]);
  const capped = await queryImaging(db.database, site, { level: 'STUDY', keys: {}, limit: 1_000_000 });
  assert.ok(capped.matches.length <= 1000);
});

test('malformed match values and levels are refused as invalid', async () => {
  const site = await createTestSite(db.database);
  const refused = async (query: ImagingQuery) => assert.ok(await queryImaging(db.database, site, query).then(() => false, (error) => isDomainError(error, 'invalid')), JSON.stringify(query));
  await refused({ level: 'STUDY', keys: { StudyDate: '2026-13-45' } });
  await refused({ level: 'STUDY', keys: { StudyDate: 'yesterday-' } });
  await refused({ level: 'STUDY', keys: { StudyTime: '2500' } });
  await refused({ level: 'STUDY', keys: { StudyInstanceUID: '1.2.abc' } });
  await refused({ level: 'SERIES', keys: { SeriesNumber: 'one' } });
  await refused({ level: 'FRAME' as 'STUDY', keys: {} });
});

test('retrieval lists a selection page by page, counted first', async () => {
  const site = await createTestSite(db.database);
  const first = await store(site, {});
  const studyInstanceUid = first.studyInstanceUid;
  for (let i = 0; i < 600; i++) await store(site, { studyInstanceUid, seriesInstanceUid: first.seriesInstanceUid });
  assert.equal(await countRetrievable(db.database, site, { studyInstanceUids: studyInstanceUid }), 601);
  const seen = new Set<string>();
  for await (const instance of retrievableInstances(db.database, site, { studyInstanceUids: studyInstanceUid })) seen.add(instance.sopInstanceUid);
  assert.equal(seen.size, 601);
  assert.equal(await countRetrievable(db.database, site, { sopInstanceUids: first.sopInstanceUid }), 1);
  await assert.rejects(countRetrievable(db.database, site, {}), (error) => isDomainError(error, 'invalid'));
});
