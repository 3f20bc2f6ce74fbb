// StudyDate and StudyTime are the modality's wall clock. With the site's time zone, or with the
// instance's own Timezone Offset From UTC (0008,0201), the study gets an instant, and FHIR
// DiagnosticReport.effectiveDateTime carries it with its offset; a study without a zone, or
// without a time, keeps its date only. Sent by dcmtk's storescu, edited by dcmodify.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createReport } from '../../src/domain/imaging/reports.ts';
import { readWorklistStudy } from '../../src/domain/imaging/worklist-query.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { diagnosticReportOf } from '../../src/domain/imaging/diagnostic-report-view.ts';
import { createTestSite } from '../support/sites.ts';
import { dcmtk, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';
import { writeSyntheticInstance } from './support/synthetic-instance.ts';

let harness: DicomHarness;
let filesDir: string;
before(async () => {
  harness = await startHarness();
  filesDir = await mkdtemp(join(tmpdir(), 'cg-dicom-zone-'));
});
after(async () => {
  await harness.stop();
  await rm(filesDir, { recursive: true, force: true });
});

const root = `1.2.826.0.1.3680043.9.${process.pid}.77`;
let counter = 0;

/** Stores one instance of a new study with these header values; returns the study's UID. */
async function storeStudy(site: SiteContext, values: Record<string, string>): Promise<string> {
  counter += 1;
  const study = `${root}.${counter}`;
  const path = join(filesDir, `${counter}.dcm`);
  await writeSyntheticInstance(path, { study, series: `${study}.1`, instance: `${study}.1.1` }, 4, 4);
  const edited = await dcmtk('dcmodify', ['-nb', ...Object.entries(values).flatMap(([tag, value]) => ['-i', `${tag}=${value}`]), path]);
  assert.equal(edited.code, 0, edited.stderr);
  const stored = await storescu(harness.listener.port, site.aeTitle, [path], ['-v']);
  assert.match(stored.stderr, /Received Store Response \(Success\)/, stored.stderr);
  return study;
}

async function studyTimes(site: SiteContext, studyUid: string) {
  const study = (await readWorklistStudy(harness.db.database, site, studyUid))!;
  const report = await createReport(harness.db.database, site, { studyInstanceUid: studyUid, text: 'No acute findings.' });
  return { startedAt: study.studyStartedAt?.toISOString() ?? null, effective: diagnosticReportOf(report).effectiveDateTime };
}

const date = '(0008,0020)';
const time = '(0008,0030)';
const offset = '(0008,0201)';

test('a London site: a summer study is read at +01:00, a winter one at +00:00', async () => {
  const site = await createTestSite(harness.db.database, { timeZone: 'Europe/London' });
  const summer = await storeStudy(site, { [date]: '20260701', [time]: '093000' });
  assert.deepEqual(await studyTimes(site, summer), { startedAt: '2026-07-01T08:30:00.000Z', effective: '2026-07-01T09:30:00+01:00' });
  const winter = await storeStudy(site, { [date]: '20260115', [time]: '093000.25' });
  assert.deepEqual(await studyTimes(site, winter), { startedAt: '2026-01-15T09:30:00.250Z', effective: '2026-01-15T09:30:00.25+00:00' });
});

test('Timezone Offset From UTC in the instance overrides the site zone', async () => {
  const site = await createTestSite(harness.db.database, { timeZone: 'Europe/London' });
  const study = await storeStudy(site, { [date]: '20260701', [time]: '093000', [offset]: '-0500' });
  assert.deepEqual(await studyTimes(site, study), { startedAt: '2026-07-01T14:30:00.000Z', effective: '2026-07-01T09:30:00-05:00' });
  // A malformed offset is ignored (the image is still stored) and the site's zone applies.
  const malformed = await storeStudy(site, { [date]: '20260701', [time]: '093000', [offset]: '+2500' });
  assert.equal((await studyTimes(site, malformed)).startedAt, '2026-07-01T08:30:00.000Z');
});

test('daylight saving edges: the earlier instant in an overlap, moved forward over a gap', async () => {
  const site = await createTestSite(harness.db.database, { timeZone: 'America/New_York' });
  const overlap = await storeStudy(site, { [date]: '20261101', [time]: '013000' });
  assert.equal((await studyTimes(site, overlap)).startedAt, '2026-11-01T05:30:00.000Z');
  const gap = await storeStudy(site, { [date]: '20260308', [time]: '023000' });
  assert.deepEqual(await studyTimes(site, gap), { startedAt: '2026-03-08T07:30:00.000Z', effective: '2026-03-08T02:30:00-05:00' });
});

test('without a zone, or without a time, a study keeps its date and claims no instant', async () => {
  const unzoned = await createTestSite(harness.db.database);
  const study = await storeStudy(unzoned, { [date]: '20260701', [time]: '093000' });
  assert.deepEqual(await studyTimes(unzoned, study), { startedAt: null, effective: '2026-07-01' });
  const zoned = await createTestSite(harness.db.database, { timeZone: 'Europe/London' });
  const dateOnly = await storeStudy(zoned, { [date]: '20260701' });
  assert.deepEqual(await studyTimes(zoned, dateOnly), { startedAt: null, effective: '2026-07-01' });
});
