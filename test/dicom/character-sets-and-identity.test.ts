import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Patient } from '@medplum/fhirtypes';
import pino from 'pino';
import { resolveStoredInstance } from '../../src/domain/imaging/stored-instance-file.ts';
import { startDicomListener } from '../../src/dicom/listener.ts';
import { headerTags } from '../../src/dicom/dataset/header-fields.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createTestSite } from '../support/sites.ts';
import { annexExamples, hex } from './support/annex-examples.ts';
import { writeTestInstance, type ElementSpec, type TestInstance } from './support/dataset-builder.ts';
import { datasetOf, startHarness, storescu, type DicomHarness } from './support/dicom-harness.ts';

// PS3.5 6.1.2.5 and annexes H, I, J over a real association (dcmtk's storescu), and PS3.4 B.2.3 /
// B.4.1.3 for values that do not conform: an image is never refused for a descriptive value, an
// identifier is never shortened (kept in full with warning 0xB000, or refused), never merged.
let harness: DicomHarness;
let filesDir: string;
before(async () => {
  harness = await startHarness();
  filesDir = await mkdtemp(join(tmpdir(), 'cg-dicom-charsets-'));
});
after(async () => {
  await harness.stop();
  await rm(filesDir, { recursive: true, force: true });
});

const root = `1.2.826.0.1.3680043.9.${process.pid}.${Date.now() % 1_000_000}`;
let counter = 0;
function uids(): { study: string; series: string; instance: string } {
  counter++;
  return { study: `${root}.${counter}.1`, series: `${root}.${counter}.2`, instance: `${root}.${counter}.3` };
}

const tags = headerTags;

interface Sent {
  instances: TestInstance[];
  /** One DIMSE status per instance, in order, as storescu received them. */
  statuses: number[];
  /** The Error Comments of the responses that carry one, in order. */
  comments: string[];
  stderr: string;
}

async function send(site: SiteContext, instances: { uids?: ReturnType<typeof uids>; attributes: ElementSpec[] }[], port = harness.listener.port): Promise<Sent> {
  const written: TestInstance[] = [];
  const paths: string[] = [];
  for (const [i, instance] of instances.entries()) {
    const path = join(filesDir, `${site.siteId}-${i}.dcm`);
    written.push(await writeTestInstance(path, instance.uids ?? uids(), instance.attributes));
    paths.push(path);
  }
  // --no-halt: storescu stops at the first failure otherwise.
  const result = await storescu(port, site.aeTitle, paths, ['-d', '-xe', '--no-halt']);
  const statuses = [...result.stderr.matchAll(/DIMSE Status\s+: 0x([0-9a-f]{4})/g)].map((match) => parseInt(match[1]!, 16));
  assert.equal(statuses.length, instances.length, result.stderr);
  const comments = [...result.stderr.matchAll(/\(0000,0902\) LO \[([^\]]*)\]/g)].map((match) => match[1]!);
  return { instances: written, statuses, comments, stderr: result.stderr };
}

interface IndexedStudy {
  dicom_patient_id: string | null;
  patient_name: string | null;
  accession_number: string | null;
  study_description: string | null;
  patient_id: string | null;
  patient_sex: string | null;
  study_date: string | null;
  modalities: string[];
}

async function studyOf(site: SiteContext, studyUid: string): Promise<IndexedStudy | undefined> {
  const { rows } = await harness.db.database.query<IndexedStudy>(
    `SELECT dicom_patient_id, patient_name, accession_number, study_description, patient_id::text, patient_sex, study_date::text, modalities
     FROM imaging_study WHERE site_id = $1 AND study_instance_uid = $2`,
    [site.siteId, studyUid],
  );
  return rows[0];
}

/** The stored file's dataset, found through the index. */
async function storedDataset(site: SiteContext, sopInstanceUid: string): Promise<Buffer | undefined> {
  const { rows } = await harness.db.database.query<{ storage_path: string }>('SELECT storage_path FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2', [
    site.siteId,
    sopInstanceUid,
  ]);
  return rows[0] ? datasetOf(await readFile(resolveStoredInstance(harness.services.config.dicomStorageDir, rows[0].storage_path))) : undefined;
}

async function patientOf(site: SiteContext, id: string | null): Promise<Patient | undefined> {
  return id ? ((await resourceStore(harness.db.database, site).read('Patient', id)) as Patient | undefined) : undefined;
}

async function instanceCount(site: SiteContext): Promise<number> {
  const { rows } = await harness.db.database.query<{ n: number }>('SELECT count(*)::int AS n FROM imaging_instance WHERE site_id = $1', [site.siteId]);
  return rows[0]!.n;
}

const success = 0x0000;
const warning = 0xb000;
const cannotUnderstand = 0xc000;

// Point 5: each name of PS3.5's annexes (and a Korean name in Hangul only, which used to be
// refused with 0xC000 for the escape sequence left in its family name).
const names = {
  ...annexExamples,
  koreanHangulOnly: { specificCharacterSet: '\\ISO 2022 IR 149', bytes: hex('1b 24 29 43 c8 ab 5e 1b 24 29 43 b1 e6 b5 bf'), name: '홍^길동' },
};
const familyNames: Record<keyof typeof names, string> = {
  japaneseKanji: 'Yamada',
  japaneseKatakana: 'ﾔﾏﾀﾞ',
  korean: 'Hong',
  chineseGb18030: 'Wang',
  chineseGb2312: 'Zhang',
  chineseGbk: 'Wang',
  koreanHangulOnly: '홍',
};

for (const [example, { specificCharacterSet, bytes, name }] of Object.entries(names) as [keyof typeof names, (typeof names)[keyof typeof names]][]) {
  test(`C-STORE of the ${example} name: Success, stored byte for byte, indexed and linked as decoded`, async () => {
    const site = await createTestSite(harness.db.database);
    const sent = await send(site, [
      { attributes: [{ tag: tags.specificCharacterSet, vr: 'CS', value: specificCharacterSet }, { tag: tags.patientName, vr: 'PN', value: bytes }, { tag: tags.patientId, vr: 'LO', value: `PID-${example}` }] },
    ]);
    assert.equal(sent.statuses[0], success, sent.stderr);
    const instance = sent.instances[0]!;
    assert.ok((await storedDataset(site, instance.sopInstanceUid))?.equals(instance.dataset), 'stored dataset differs from the one sent');
    const study = await studyOf(site, instance.studyInstanceUid);
    assert.equal(study?.patient_name, name);
    const patient = await patientOf(site, study!.patient_id);
    assert.equal(patient?.identifier?.[0]?.value, `PID-${example}`);
    assert.equal(patient?.name?.[0]?.family, familyNames[example]);
  });
}

test('whatever a descriptive attribute holds, the image is stored and answered with warning 0xB000', async () => {
  const site = await createTestSite(harness.db.database);
  const sent = await send(site, [
    {
      attributes: [
        { tag: tags.specificCharacterSet, vr: 'CS', value: 'ISO_IR 192' },
        // A control character in the name (it used to make the FHIR Patient invalid: 0xC000).
        { tag: tags.patientName, vr: 'PN', value: Buffer.from('Doe\u0007^Jane', 'utf8') },
        { tag: tags.patientId, vr: 'LO', value: 'DESCRIPTIVE-1' },
        // Bytes that are not UTF-8, a date that is no date, an unknown sex, an over-long modality.
        { tag: tags.studyDescription, vr: 'LO', value: Buffer.from([0x43, 0x54, 0x20, 0xff, 0xfe, 0x20, 0x48, 0x65, 0x61, 0x64]) },
        { tag: tags.studyDate, vr: 'DA', value: '20241345' },
        { tag: tags.patientSex, vr: 'CS', value: 'U' },
        { tag: tags.modality, vr: 'CS', value: 'MODALITYNAMEWAYTOOLONG' },
        { tag: tags.seriesDescription, vr: 'LO', value: 'S'.repeat(2000) },
      ],
    },
    // A character set nobody defined.
    { attributes: [{ tag: tags.specificCharacterSet, vr: 'CS', value: 'KLINGON' }, { tag: tags.patientName, vr: 'PN', value: Buffer.from('Qo\u00e9^Nos', 'latin1') }, { tag: tags.patientId, vr: 'LO', value: 'DESCRIPTIVE-2' }] },
  ]);
  assert.deepEqual(sent.statuses, [warning, warning], sent.stderr);
  assert.deepEqual(sent.comments, [
    'Non-conforming: StudyDescription, PatientName, PatientSex +3',
    'Non-conforming: SpecificCharacterSet, PatientName',
  ]);
  assert.equal(await instanceCount(site), 2);
  for (const instance of sent.instances) assert.ok((await storedDataset(site, instance.sopInstanceUid))?.equals(instance.dataset));
  const first = await studyOf(site, sent.instances[0]!.studyInstanceUid);
  assert.equal(first?.patient_name, 'Doe\ufffd^Jane');
  assert.equal(first?.study_description, 'CT \ufffd\ufffd Head');
  assert.equal(first?.study_date, null);
  assert.equal(first?.patient_sex, null);
  assert.deepEqual(first?.modalities, []);
  assert.equal((await patientOf(site, first!.patient_id))?.name?.[0]?.family, 'Doe\ufffd');
  const second = await studyOf(site, sent.instances[1]!.studyInstanceUid);
  assert.equal(second?.patient_name, 'Qoé^Nos');
  assert.ok(second?.patient_id);
});

// Point 6: no identifier is silently truncated.
const prefix64 = 'P'.repeat(60) + '0123';

test('two 70-character PatientIDs that differ after character 64 are two patients, each kept in full, with warning 0xB000', async () => {
  const site = await createTestSite(harness.db.database);
  const [a, b] = [`${prefix64}AAAAAA`, `${prefix64}BBBBBB`];
  const sent = await send(site, [
    { attributes: [{ tag: tags.patientId, vr: 'LO', value: a }] },
    { attributes: [{ tag: tags.patientId, vr: 'LO', value: b }] },
  ]);
  assert.deepEqual(sent.statuses, [warning, warning], sent.stderr);
  assert.deepEqual(sent.comments, ['Non-conforming: PatientID', 'Non-conforming: PatientID']);
  const [first, second] = [await studyOf(site, sent.instances[0]!.studyInstanceUid), await studyOf(site, sent.instances[1]!.studyInstanceUid)];
  assert.equal(first?.dicom_patient_id, a);
  assert.equal(second?.dicom_patient_id, b);
  assert.ok(first?.patient_id && second?.patient_id);
  assert.notEqual(first.patient_id, second.patient_id);
  assert.equal((await patientOf(site, first.patient_id))?.identifier?.[0]?.value, a);
  assert.equal((await patientOf(site, second.patient_id))?.identifier?.[0]?.value, b);
});

test('AccessionNumbers, names and descriptions longer than the old cuts are kept in full, with warning 0xB000', async () => {
  const site = await createTestSite(harness.db.database);
  const accessions = [`${prefix64}AAAAAA`, `${prefix64}BBBBBB`];
  // 400 characters: the index used to keep 324 of a name, 1024 of a description.
  const longName = `${'F'.repeat(200)}^${'G'.repeat(199)}`;
  const sent = await send(site, [
    { attributes: [{ tag: tags.accessionNumber, vr: 'SH', value: accessions[0]! }, { tag: tags.patientName, vr: 'PN', value: longName }] },
    { attributes: [{ tag: tags.accessionNumber, vr: 'SH', value: accessions[1]! }, { tag: tags.studyDescription, vr: 'LO', value: 'D'.repeat(1000) }] },
    // 17 characters: one over SH's 16, which was kept but never said.
    { attributes: [{ tag: tags.accessionNumber, vr: 'SH', value: 'ACC-0123456789-17' }] },
  ]);
  assert.deepEqual(sent.statuses, [warning, warning, warning], sent.stderr);
  const studies = await Promise.all(sent.instances.map((instance) => studyOf(site, instance.studyInstanceUid)));
  assert.deepEqual(
    studies.map((study) => study?.accession_number),
    [...accessions, 'ACC-0123456789-17'],
  );
  assert.equal(studies[0]?.patient_name, longName);
  assert.equal(studies[1]?.study_description, 'D'.repeat(1000));
  // The other attributes of a conforming instance do not warn.
  const plain = await send(site, [{ attributes: [{ tag: tags.accessionNumber, vr: 'SH', value: 'ACC-16-CHARS-OK!' }] }]);
  assert.equal(plain.statuses[0], success, plain.stderr);
});

test('UIDs longer than 64 characters are refused with 0xC000 and nothing is kept; UIDs differing after character 64 never meet', async () => {
  const site = await createTestSite(harness.db.database);
  const long = (tail: string) => `${root}.${'1'.repeat(64 - root.length)}${tail}`;
  const sent = await send(site, [
    { uids: { ...uids(), study: long('.1') }, attributes: [] },
    { uids: { ...uids(), study: long('.2') }, attributes: [] },
    { uids: { ...uids(), series: long('.3') }, attributes: [] },
    { uids: { ...uids(), instance: long('.4') }, attributes: [] },
  ]);
  assert.deepEqual(sent.statuses, sent.instances.map(() => cannotUnderstand), sent.stderr);
  assert.equal(await instanceCount(site), 0);
});

test('a PatientID the index cannot keep as an identifier is refused with a failure that says why; nothing is kept', async () => {
  const site = await createTestSite(harness.db.database);
  const sent = await send(site, [
    { attributes: [{ tag: tags.patientId, vr: 'LO', value: 'ID\u0007X' }] },
    // Over 256 characters: it used to be cut to 64 and answered Success.
    { attributes: [{ tag: tags.patientId, vr: 'LO', value: `${prefix64}${'Z'.repeat(200)}` }] },
    // Over what the header reader keeps in memory (64 KiB): it used to be read as no PatientID.
    { attributes: [{ tag: tags.patientId, vr: 'UN', value: Buffer.alloc(70_000, 0x41) }] },
    { attributes: [{ tag: tags.accessionNumber, vr: 'SH', value: 'ACC\u0000X' }] },
  ]);
  assert.deepEqual(sent.statuses, sent.instances.map(() => cannotUnderstand), sent.stderr);
  assert.equal(await instanceCount(site), 0);
  assert.deepEqual(sent.comments, [
    'PatientID has control characters: cannot be an identifier',
    'PatientID is 264 characters long, over the 256 kept',
    'PatientID is too long to be read',
    'AccessionNumber has control characters: cannot be an identifier',
  ]);
});

test('an instance stored with a warning counts as stored in the association log, and its findings are logged', async () => {
  const lines: { level: number; msg: string; stored?: number; refused?: number; findings?: { attribute: string; problem: string }[] }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const listener = await startDicomListener({ ...harness.services, logger }, { host: '127.0.0.1', port: 0 });
  try {
    const site = await createTestSite(harness.db.database);
    const sent = await send(
      site,
      [
        { attributes: [] },
        { attributes: [{ tag: tags.patientId, vr: 'LO', value: `${prefix64}-LONG` }] },
        { attributes: [{ tag: tags.patientId, vr: 'LO', value: 'ID\u0001' }] },
      ],
      listener.port,
    );
    assert.deepEqual(sent.statuses, [success, warning, cannotUnderstand], sent.stderr);
  } finally {
    await listener.close();
  }
  const released = lines.filter((line) => line.msg === 'association released');
  assert.deepEqual([released[0]?.stored, released[0]?.refused], [2, 1]);
  const findings = lines.filter((line) => line.msg === 'instance indexed with non-conforming values');
  assert.deepEqual(findings.map((line) => line.findings), [[{ attribute: 'PatientID', problem: "69 characters, over its VR's 64: kept in full" }]]);
});
