import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createTestSite } from '../support/sites.ts';
import { dicomFixture, listFiles, transferFiles, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';

// One file per SOP Instance UID (the MR_small variants share one, as do the two SC_rgb files),
// each with the storescu option that sends it in its own transfer syntax.
const distinct: [file: string, option: string][] = [
  ['CT_small.dcm', '-xe'],
  ['JPEG2000.dcm', '-xw'],
  ['JPGExtended.dcm', '-xx'],
  ['MR_small_bigendian.dcm', '-xb'],
  ['SC_rgb_jpeg_dcmtk.dcm', '-xy'],
  ['SC_rgb_rle_2frame.dcm', '-xr'],
  ['image_dfl.dcm', '-xd'],
  ['rtdose.dcm', '-xi'],
  ['rtplan.dcm', '-xi'],
  ['test-SR.dcm', '-xe'],
];

let harness: DicomHarness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.stop());

async function countRows(table: string, siteId: string): Promise<number> {
  const { rows } = await harness.db.database.query(`SELECT count(*)::int AS n FROM ${table} WHERE site_id = $1`, [siteId]);
  return rows[0].n;
}

/** storescu sends one file per run with its own proposal option; several runs share an association each. */
function sendAll(aeTitle: string, files: [string, string][]) {
  return Promise.all(files.map(([file, option]) => storescu(harness.listener.port, aeTitle, [dicomFixture(file)], [option])));
}

test('4 concurrent associations to 4 sites each store every instance in their own site', async () => {
  const sites = await Promise.all([1, 2, 3, 4].map(() => createTestSite(harness.db.database)));
  // One association per site carrying several instances: the uncompressed files, which storescu
  // can send on the contexts it proposes by default.
  const files = ['CT_small.dcm', 'MR_small_bigendian.dcm', 'rtdose.dcm', 'rtplan.dcm', 'test-SR.dcm', 'image_dfl.dcm'].map(dicomFixture);
  const results = await Promise.all(sites.map((site) => storescu(harness.listener.port, site.aeTitle, files, ['-v'])));
  for (const result of results) {
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr.match(/Received Store Response \(Success\)/g)?.length, files.length);
    assert.equal(result.stderr.match(/Requesting Association/g)?.length, 1);
  }
  for (const site of sites) {
    assert.equal(await countRows('imaging_instance', site.siteId), files.length);
    assert.equal((await listFiles(join(harness.dataDir, 'dicom', site.siteId))).length, files.length);
  }
  assert.deepEqual(await transferFiles(harness.dataDir), []);
  // Instances finishing while another's index transaction runs are committed with the next one.
  const { rows: commits } = await harness.db.database.query<{ rows: number; transactions: number }>(
    'SELECT count(*)::int AS rows, count(DISTINCT xmin::text)::int AS transactions FROM imaging_instance WHERE site_id = ANY ($1::uuid[])',
    [sites.map((site) => site.siteId)],
  );
  assert.equal(commits[0]!.rows, files.length * sites.length);
  assert.ok(commits[0]!.transactions < commits[0]!.rows, 'concurrent associations share index commits');
});

test('4 concurrent associations to one site, each with different instances, store them all', async () => {
  const site = await createTestSite(harness.db.database);
  const groups = [0, 1, 2, 3].map((group) => distinct.filter((_, index) => index % 4 === group));
  const results = await Promise.all(groups.map((files) => sendAll(site.aeTitle, files)));
  for (const result of results.flat()) assert.equal(result.code, 0, result.stderr);
  assert.equal(await countRows('imaging_instance', site.siteId), distinct.length);
});

test('the same instance sent on 4 concurrent associations is stored once, and every sender gets success', async () => {
  const site = await createTestSite(harness.db.database);
  const file = dicomFixture('CT_small.dcm');
  const results = await Promise.all([1, 2, 3, 4].map(() => storescu(harness.listener.port, site.aeTitle, [file], ['-v', '-xe'])));
  for (const result of results) assert.match(result.stderr, /Received Store Response \(Success\)/);
  assert.equal(await countRows('imaging_instance', site.siteId), 1);
  assert.equal((await listFiles(join(harness.dataDir, 'dicom', site.siteId))).length, 1);
  assert.deepEqual(await transferFiles(harness.dataDir), []);
});

test('the same PatientID in two sites gives two studies linked to two patients, one per site', async () => {
  const siteA = await createTestSite(harness.db.database);
  const siteB = await createTestSite(harness.db.database);
  for (const site of [siteA, siteB]) {
    const result = await storescu(harness.listener.port, site.aeTitle, [dicomFixture('CT_small.dcm')], ['-xe']);
    assert.equal(result.code, 0, result.stderr);
  }
  const studies = await Promise.all(
    [siteA, siteB].map(async (site) => {
      const { rows } = await harness.db.database.query('SELECT dicom_patient_id, patient_id FROM imaging_study WHERE site_id = $1', [site.siteId]);
      assert.equal(rows.length, 1);
      return rows[0];
    }),
  );
  assert.deepEqual(studies.map((study) => study.dicom_patient_id), ['1CT1', '1CT1']);
  assert.ok(studies[0].patient_id && studies[1].patient_id, 'each study is linked to a patient');
  assert.notEqual(studies[0].patient_id, studies[1].patient_id);
  for (const [index, site] of [siteA, siteB].entries()) {
    const { rows } = await harness.db.database.query(
      "SELECT business_identifier FROM clinical_resource WHERE site_id = $1 AND resource_type = 'Patient' AND id = $2",
      [site.siteId, studies[index].patient_id],
    );
    assert.deepEqual(rows, [{ business_identifier: '1CT1' }]);
  }
});
