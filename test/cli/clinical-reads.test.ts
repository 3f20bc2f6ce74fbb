// The CLI's clinical reads (a study's detail, a patient search and chart, a message's text) as
// scripts use them: --json, exit 1 for an unknown or another site's object, and each read recorded
// in the data access log with the CLI as its surface and no user (the operator).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { recordMessage } from '../../src/domain/messages/message-log.ts';
import { resourceStore } from '../../src/domain/records/resource-store.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { runCli, runCliJson, useCliDatabase } from '../support/cli.ts';
import { createTestSite } from '../support/sites.ts';
import { receivedInstance } from '../domain/imaging/fixtures.ts';

const cli = useCliDatabase();

interface AuditRow {
  surface: string;
  interaction: string;
  resource_type: string;
  resource_ids: string[];
  patient_ids: string[];
  user_id: string | null;
  key_id: string | null;
  query: string | null;
}

async function auditRows(site: SiteContext): Promise<AuditRow[]> {
  const { rows } = await cli.database().query<AuditRow>('SELECT surface, interaction, resource_type, resource_ids, patient_ids, user_id, key_id, query FROM data_access_audit WHERE site_id = $1 ORDER BY id', [site.siteId]);
  return rows;
}

async function seed(site: SiteContext, identifier: string) {
  const { patient } = await resourceStore(cli.database(), site).findOrCreatePatient(identifier, () => ({ resourceType: 'Patient', identifier: [{ value: identifier }], name: [{ family: 'Reader', given: ['Rita'] }], birthDate: '1970-01-01' }));
  const instance = receivedInstance({ patientId: identifier, patientName: 'Reader^Rita' });
  await cli.database().transaction((tx) => indexInstance(tx, site, instance));
  const message = await cli.database().transaction((tx) =>
    recordMessage(tx, site, {
      protocol: 'hl7v2', transport: 'mllp', sendingApplication: 'LAB', sendingFacility: 'A', controlId: `${identifier}-M`, messageType: 'ADT^A01',
      outcome: 'processed', ackCode: 'AA', problems: [], ackText: `MSH|^~\\&|GW\rMSA|AA|${identifier}-M\r`, raw: Buffer.from(`MSH|^~\\&|LAB|A\rPID|||${identifier}\r`),
    }),
  );
  return { patient, instance, message };
}

test('studies show, patients search and show, messages show answer --json and record each read as the operator\'s', async () => {
  const site = await createTestSite(cli.database());
  const { patient, instance, message } = await seed(site, 'CR-P1');

  const study = await runCliJson<{ study_uid: string; fhir_patient_id: string; series: { series_uid: string; instances: number }[]; procedure_steps: unknown[]; reports: unknown[] }>(
    ['studies', 'show', instance.studyInstanceUid, '--site', site.siteId], cli.env());
  assert.equal(study.study_uid, instance.studyInstanceUid);
  assert.equal(study.fhir_patient_id, patient.id);
  assert.deepEqual(study.series.map((series) => [series.series_uid, series.instances]), [[instance.seriesInstanceUid, 1]]);
  assert.deepEqual(study.reports, []);

  const found = await runCliJson<{ patients: { id: string; name: string; birth_date: string; identifiers: string[] }[] }>(['patients', 'search', '--site', site.siteName, '--name', 'read', '--birth-date', '1970-01-01'], cli.env());
  assert.deepEqual(found.patients, [{ id: patient.id, name: 'Reader, Rita', birth_date: '1970-01-01', gender: null, identifiers: ['CR-P1'], active: true }]);
  const none = await runCliJson<{ patients: unknown[] }>(['patients', 'search', '--site', site.siteId, '--identifier', 'NOBODY'], cli.env());
  assert.deepEqual(none.patients, []);

  const chart = await runCliJson<{ id: string; patient: { resourceType: string; id: string }; studies: { study_uid: string }[]; observations: unknown[]; truncated: boolean }>(
    ['patients', 'show', patient.id!, '--site', site.siteId], cli.env());
  assert.equal(chart.patient.resourceType, 'Patient');
  assert.equal(chart.patient.id, patient.id);
  assert.deepEqual(chart.studies.map((s) => s.study_uid), [instance.studyInstanceUid]);
  assert.equal(chart.truncated, false);

  const shown = await runCliJson<{ id: string; control_id: string; raw: string; raw_size: number; ack_text: string; attempts: unknown[] }>(['messages', 'show', message.id, '--site', site.siteId], cli.env());
  assert.equal(shown.control_id, 'CR-P1-M');
  assert.equal(shown.raw, 'MSH|^~\\&|LAB|A\nPID|||CR-P1\n');
  assert.match(shown.ack_text, /MSA\|AA\|CR-P1-M/);
  assert.deepEqual(shown.attempts, []);

  const text = await runCli(['patients', 'show', patient.id!, '--site', site.siteId], cli.env());
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /name: Reader, Rita/);

  const rows = await auditRows(site);
  assert.deepEqual(rows.map((row) => [row.interaction, row.resource_type, row.resource_ids]), [
    ['view', 'Study', [instance.studyInstanceUid]],
    ['search', 'Patient', [patient.id]],
    ['search', 'Patient', []],
    ['view', 'Patient', [patient.id]],
    ['view', 'Message', [message.id]],
    ['view', 'Patient', [patient.id]],
  ]);
  for (const row of rows) {
    assert.equal(row.surface, 'cli');
    assert.equal(row.user_id, null);
    assert.equal(row.key_id, null);
  }
  assert.deepEqual(rows[0]!.patient_ids, [patient.id]);
  assert.equal(rows[1]!.query, 'name=read&birthDate=1970-01-01');

  const listed = await runCliJson<{ entries: { surface: string }[] }>(['audit', 'list', '--site', site.siteId, '--patient', patient.id!], cli.env());
  assert.ok(listed.entries.length >= 4 && listed.entries.every((entry) => entry.surface === 'cli'));
});

test('studies list and messages list are recorded as searches', async () => {
  const site = await createTestSite(cli.database());
  const { patient, instance, message } = await seed(site, 'CR-P2');
  await runCliJson(['studies', 'list', '--site', site.siteId, '--patient', 'CR-P2'], cli.env());
  await runCliJson(['messages', 'list', '--site', site.siteId, '--control-id', 'CR-P2-M'], cli.env());
  const rows = await auditRows(site);
  assert.deepEqual(rows.map((row) => [row.surface, row.interaction, row.resource_type, row.resource_ids, row.patient_ids]), [
    ['cli', 'search', 'Study', [instance.studyInstanceUid], [patient.id]],
    ['cli', 'search', 'Message', [message.id], []],
  ]);
  assert.match(rows[0]!.query!, /patient=CR-P2/);
  assert.match(rows[1]!.query!, /controlId=CR-P2-M/);
});

test('an unknown or another site\'s study, patient or message is not found (exit 1, --json error), and nothing is recorded', async () => {
  const site = await createTestSite(cli.database());
  const other = await createTestSite(cli.database());
  const theirs = await seed(other, 'CR-P3');
  const attempts = [
    ['studies', 'show', theirs.instance.studyInstanceUid],
    ['studies', 'show', '1.2.3.4.5'],
    ['patients', 'show', theirs.patient.id!],
    ['patients', 'show', 'not-a-uuid'],
    ['messages', 'show', theirs.message.id],
    ['messages', 'show', '00000000-0000-4000-8000-000000000000'],
  ];
  for (const args of attempts) {
    const result = await runCli([...args, '--site', site.siteId, '--json'], cli.env());
    assert.equal(result.status, 1, args.join(' '));
    assert.equal(JSON.parse(result.stderr).error.code, 'not-found', args.join(' '));
  }
  assert.deepEqual(await auditRows(site), []);
  assert.deepEqual(await auditRows(other), []);
});

test('bad input: a missing id, no search criteria or a bad birth date', async () => {
  const site = await createTestSite(cli.database());
  for (const args of [['studies', 'show'], ['patients', 'show'], ['messages', 'show'], ['patients', 'search'], ['patients', 'search', '--name', 'x', '--limit', '0']]) {
    const result = await runCli([...args, '--site', site.siteId, '--json'], cli.env());
    assert.equal(result.status, 2, args.join(' '));
    assert.equal(JSON.parse(result.stderr).error.code, 'usage');
  }
  const badDate = await runCli(['patients', 'search', '--site', site.siteId, '--birth-date', '1970-13-01', '--json'], cli.env());
  assert.equal(badDate.status, 1);
  assert.equal(JSON.parse(badDate.stderr).error.code, 'invalid');
});
