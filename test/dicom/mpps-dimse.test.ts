import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Dimse from 'dcmjs-dimse';
import { createTestSite } from '../support/sites.ts';
import { startHarness, type DicomHarness } from './support/dicom-harness.ts';
import { associate, commandSet, pData, statusOf } from './support/raw-peer.ts';

// dcmjs-dimse as the N-CREATE / N-SET SCU: an independent DIMSE implementation (Debian's dcmtk
// ships no MPPS SCU). It is CommonJS, hence the require.
const dimse = createRequire(import.meta.url)('dcmjs-dimse') as typeof Dimse;
const { Client, Dataset } = dimse;
const { NCreateRequest, NSetRequest } = dimse.requests;

const mppsClass = '1.2.840.10008.3.1.2.3.3';

type MppsRequest = InstanceType<typeof NCreateRequest> | InstanceType<typeof NSetRequest>;
interface MppsResponse {
  getStatus(): number;
  getErrorComment(): string;
  getAffectedSopInstanceUid(): string;
}

let harness: DicomHarness;
before(async () => {
  harness = await startHarness();
});
after(() => harness.stop());

interface Answer {
  status: number;
  errorComment: string;
  affectedSopInstanceUid: string;
}

/** Sends the requests on one association; resolves with their responses once it is closed. */
function send(calledAe: string, requests: MppsRequest[]): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const answers: Answer[] = [];
    const client = new Client();
    for (const request of requests) {
      request.on('response', (r: MppsResponse) => {
        answers.push({ status: r.getStatus(), errorComment: r.getErrorComment() ?? '', affectedSopInstanceUid: r.getAffectedSopInstanceUid() });
      });
      client.addRequest(request);
    }
    client.on('associationRejected', (result: unknown) => reject(new Error(`association rejected: ${JSON.stringify(result)}`)));
    client.on('networkError', (error: Error) => reject(error));
    client.on('closed', () => resolve(answers));
    client.send('127.0.0.1', harness.listener.port, 'MODALITY1', calledAe);
  });
}

function create(instanceUid: string, attributes: Record<string, unknown>): MppsRequest {
  const request = new NCreateRequest(mppsClass, instanceUid);
  request.setDataset(new Dataset(attributes));
  return request;
}

function update(instanceUid: string, attributes: Record<string, unknown>): MppsRequest {
  const request = new NSetRequest(mppsClass, instanceUid);
  request.setDataset(new Dataset(attributes));
  return request;
}

let counter = 0;
const uid = () => `1.2.826.0.1.3680043.10.999.${Date.now()}.${++counter}`;

const inProgress = (studyUid: string) => ({
  PerformedProcedureStepStatus: 'IN PROGRESS',
  ScheduledStepAttributesSequence: [{ StudyInstanceUID: studyUid, AccessionNumber: 'A1' }],
  Modality: 'CT',
  PerformedStationAETitle: 'CT01',
  PerformedProcedureStepStartDate: '20260301',
  PerformedProcedureStepStartTime: '101500',
  TimezoneOffsetFromUTC: '+0100',
  ProcedureCodeSequence: [{ CodeValue: 'CTHEAD', CodingSchemeDesignator: 'L', CodeMeaning: 'CT head' }],
});

async function stepOf(siteId: string, instanceUid: string) {
  const { rows } = await harness.db.database.query(
    'SELECT * FROM imaging_procedure_step WHERE site_id = $1 AND sop_instance_uid = $2',
    [siteId, instanceUid],
  );
  return rows[0];
}

test('N-CREATE (IN PROGRESS) then N-SET (COMPLETED) record the step; a final step refuses further N-SET', async () => {
  const site = await createTestSite(harness.db.database);
  const step = uid();
  const study = uid();
  const answers = await send(site.aeTitle, [
    create(step, inProgress(study)),
    update(step, { PerformedProcedureStepStatus: 'COMPLETED', PerformedProcedureStepEndDate: '20260301', PerformedProcedureStepEndTime: '103000', TimezoneOffsetFromUTC: '+0100' }),
    update(step, { PerformedProcedureStepStatus: 'IN PROGRESS' }),
  ]);
  assert.deepEqual(answers.map((answer) => answer.status), [0x0000, 0x0000, 0x0110]);
  assert.equal(answers[0]!.affectedSopInstanceUid, step);
  const row = await stepOf(site.siteId, step);
  assert.equal(row.status, 'COMPLETED');
  assert.equal(row.study_instance_uid, study);
  assert.equal(row.modality, 'CT');
  assert.equal(row.station_ae_title, 'CT01');
  assert.equal(row.source, 'dimse');
  assert.equal(row.procedure_code_value, 'CTHEAD');
  assert.equal(row.procedure_code_meaning, 'CT head');
  assert.equal(row.started_at.toISOString(), '2026-03-01T09:15:00.000Z');
  assert.equal(row.ended_at.toISOString(), '2026-03-01T09:30:00.000Z');
});

test('N-CREATE of a known instance gets 0x0111; N-SET of an unknown one gets 0x0112', async () => {
  const site = await createTestSite(harness.db.database);
  const step = uid();
  const answers = await send(site.aeTitle, [create(step, inProgress(uid())), create(step, inProgress(uid())), update(uid(), { PerformedProcedureStepStatus: 'COMPLETED' })]);
  assert.deepEqual(answers.map((answer) => answer.status), [0x0000, 0x0111, 0x0112]);
});

test('N-CREATE attribute errors: status not IN PROGRESS, status or study missing, bad modality, bad date', async () => {
  const site = await createTestSite(harness.db.database);
  const { PerformedProcedureStepStatus: _status, ...withoutStatus } = inProgress(uid());
  const answers = await send(site.aeTitle, [
    create(uid(), { ...inProgress(uid()), PerformedProcedureStepStatus: 'COMPLETED' }),
    create(uid(), withoutStatus),
    create(uid(), { ...inProgress(uid()), ScheduledStepAttributesSequence: [{ AccessionNumber: 'A1' }] }),
    create(uid(), { ...inProgress(uid()), Modality: 'not a modality!' }),
    create(uid(), { ...inProgress(uid()), PerformedProcedureStepStartDate: '20261399' }),
    create(uid(), { ...inProgress(uid()), PerformedProcedureStepStatus: 'PAUSED' }),
  ]);
  assert.deepEqual(answers.map((answer) => answer.status), [0x0106, 0x0120, 0x0120, 0x0106, 0x0106, 0x0106]);
  const { rows } = await harness.db.database.query('SELECT count(*)::int AS n FROM imaging_procedure_step WHERE site_id = $1', [site.siteId]);
  assert.equal(rows[0].n, 0);
});

test("another site's step is unknown: N-SET through its AE title gets 0x0112 and changes nothing", async () => {
  const siteA = await createTestSite(harness.db.database);
  const siteB = await createTestSite(harness.db.database);
  const step = uid();
  assert.deepEqual((await send(siteA.aeTitle, [create(step, inProgress(uid()))])).map((answer) => answer.status), [0x0000]);
  const answers = await send(siteB.aeTitle, [update(step, { PerformedProcedureStepStatus: 'DISCONTINUED' })]);
  assert.deepEqual(answers.map((answer) => answer.status), [0x0112]);
  assert.equal((await stepOf(siteA.siteId, step)).status, 'IN PROGRESS');
  assert.equal(await stepOf(siteB.siteId, step), undefined);
});

test('N-CREATE without an Affected SOP Instance UID: the SCP assigns one and returns it', async () => {
  const site = await createTestSite(harness.db.database);
  const answers = await send(site.aeTitle, [create('', inProgress(uid()))]);
  assert.equal(answers[0]!.status, 0x0000);
  assert.match(answers[0]!.affectedSopInstanceUid, /^2\.25\.\d+$/);
  assert.equal((await stepOf(site.siteId, answers[0]!.affectedSopInstanceUid)).status, 'IN PROGRESS');
});

test('an attribute list over 1 MiB is refused with 0x0110 and nothing is recorded', async () => {
  const site = await createTestSite(harness.db.database);
  const step = uid();
  const answers = await send(site.aeTitle, [create(step, { ...inProgress(uid()), EncapsulatedDocument: [new Uint8Array(1_200_000).buffer] })]);
  assert.deepEqual(answers.map((answer) => answer.status), [0x0110]);
  assert.equal(answers[0]!.errorComment, 'Attribute list too large');
  assert.equal(await stepOf(site.siteId, step), undefined);
});

test('an attribute list that is not a dataset is refused with 0x0110', async () => {
  const site = await createTestSite(harness.db.database);
  const step = uid();
  const peer = await associate(harness.listener.port, site.aeTitle, [{ id: 1, abstractSyntax: mppsClass, transferSyntaxes: ['1.2.840.10008.1.2.1'] }]);
  peer.write(pData(1, true, true, commandSet([[0x0002, mppsClass], [0x0100, 0x0140], [0x0110, 1], [0x0800, 0x0000], [0x1000, step]])));
  peer.write(pData(1, false, true, Buffer.from([0x10, 0x00, 0x20, 0x00, 0x4c, 0x4f, 0xff, 0x7f, 0x41])));
  const response = await peer.nextPdu();
  assert.equal(response?.type, 0x04);
  assert.equal(statusOf(response!.body), 0x0110);
  assert.equal(await stepOf(site.siteId, step), undefined);
  peer.destroy();
});

test('start and end times without Timezone Offset From UTC are read in the site\'s time zone', async () => {
  const { TimezoneOffsetFromUTC: _offset, ...local } = inProgress(uid());
  const summer = { ...local, PerformedProcedureStepStartDate: '20260701', PerformedProcedureStepStartTime: '101500' };
  const london = await createTestSite(harness.db.database, { timeZone: 'Europe/London' });
  const unzoned = await createTestSite(harness.db.database);
  const [inLondon, inUtc] = [uid(), uid()];
  assert.deepEqual((await send(london.aeTitle, [create(inLondon, summer)])).map((a) => a.status), [0x0000]);
  assert.deepEqual((await send(unzoned.aeTitle, [create(inUtc, summer)])).map((a) => a.status), [0x0000]);
  assert.equal((await stepOf(london.siteId, inLondon)).started_at.toISOString(), '2026-07-01T09:15:00.000Z');
  // No zone: UTC (as HL7 v2 times are read), never the server's own zone.
  assert.equal((await stepOf(unzoned.siteId, inUtc)).started_at.toISOString(), '2026-07-01T10:15:00.000Z');
});
