import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Observation } from '@medplum/fhirtypes';
import { listIntegrationClients } from '../../src/domain/clients/integration-clients.ts';
import { listWorklist } from '../../src/domain/imaging/worklist.ts';
import { authenticateApiKey } from '../../src/domain/keys/api-keys.ts';
import { listMessages } from '../../src/domain/messages/message-log.ts';
import { searchPatients } from '../../src/domain/patients/chart.ts';
import { readCurrent, readPatientByBusinessIdentifier, readPatientCompartment } from '../../src/domain/records/read.ts';
import { resolveSite, siteContextFor } from '../../src/domain/sites/sites.ts';
import { countRows } from '../../src/storage/backup/counted-tables.ts';
import { createBackup } from '../../src/storage/backup/create-backup.ts';
import { restoreBackup } from '../../src/storage/backup/restore-backup.ts';
import { migrate } from '../../src/storage/migrations.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

/**
 * The oldest schema a deployment can hold. There are no release tags: the first complete build
 * (every surface and the administration app, 2026-11-22) is taken as the first release, and its
 * migrations are the ones added that day. 0002 came two days later with a lower number, so
 * migrating forward also exercises a migration older in number than ones already applied.
 */
const oldestReleasedSchema = new Set([1, 100, 101, 102, 200, 300, 301, 302, 303, 400]);

let db: TestDatabase;
const siteId = randomUUID();
const patientId = randomUUID();
const observationId = randomUUID();
const studyUid = '1.2.826.0.1.3680043.10.1.1';
const seriesUid = '1.2.826.0.1.3680043.10.1.1.1';
const sopUid = '1.2.826.0.1.3680043.10.1.1.1.1';
let apiKey: string;

before(async () => {
  db = await createTestDatabase({ migrate: false });
  await migrate(db.database, { only: (migration) => oldestReleasedSchema.has(migration.version) });
  await fillAsTheFirstReleaseWrote(db);
});
after(() => db.drop());

/** Rows as the first release's code wrote them, column for column of that schema. */
async function fillAsTheFirstReleaseWrote(target: TestDatabase): Promise<void> {
  const sql = target.database;
  const userId = randomUUID();
  await sql.query("INSERT INTO site (id, name, ae_title) VALUES ($1, 'Upgrade Clinic', 'UPGRADE1')", [siteId]);
  await sql.query("INSERT INTO app_user (id, site_id, email, role) VALUES ($1, $2, 'ris@upgrade.test', 'clinician')", [userId, siteId]);
  const prefix = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  apiKey = `cg_${prefix}_${secret}`;
  await sql.query("INSERT INTO api_key (id, site_id, user_id, prefix, secret_hash, label) VALUES ($1, $2, $3, $4, $5, 'ris')", [randomUUID(), siteId, userId, prefix, createHash('sha256').update(secret).digest()]);
  await sql.query("INSERT INTO integration_client (id, site_id, name, protocol, allowed_ips, sending_application, sending_facility) VALUES ($1, $2, 'lab feed', 'hl7-mllp', '{127.0.0.1}', 'LAB', 'MAIN')", [randomUUID(), siteId]);
  const at = '2026-11-22T08:00:00.000Z';
  const patient = { resourceType: 'Patient', id: patientId, meta: { versionId: '1', lastUpdated: at }, identifier: [{ system: 'urn:mrn', value: 'MRN-UP-1' }], name: [{ family: 'Doe', given: ['Jane'] }], gender: 'female', birthDate: '1980-02-03' };
  const observation = { resourceType: 'Observation', id: observationId, meta: { versionId: '1', lastUpdated: at }, status: 'final', code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] }, subject: { reference: `Patient/${patientId}` }, valueQuantity: { value: 5.4, unit: 'mmol/L' } };
  await sql.query(
    `INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, business_identifier, name_search, birth_date_start, birth_date_end)
     VALUES ($1, 'Patient', $2, 1, $3, $4, 'MRN-UP-1', 'doe jane', '1980-02-03', '1980-02-03')`,
    [siteId, patientId, at, patient],
  );
  await sql.query("INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id) VALUES ($1, 'Observation', $2, 1, $3, $4, $5)", [siteId, observationId, at, observation, patientId]);
  for (const [type, id, content] of [['Patient', patientId, patient], ['Observation', observationId, observation]] as const) {
    await sql.query('INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content) VALUES ($1, $2, $3, 1, $4, $5)', [siteId, type, id, at, content]);
  }
  await sql.query("INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id) VALUES ($1, 'Patient', 'identifier', 'MRN-UP-1', 'urn:mrn', $2), ($1, 'Observation', 'code', '2345-7', 'http://loinc.org', $3)", [siteId, patientId, observationId]);
  await sql.query(
    `INSERT INTO inbound_message (site_id, id, protocol, transport, sending_application, sending_facility, control_id, message_type, outcome, ack_code, ack_text, raw)
     VALUES ($1, $2, 'hl7v2', 'mllp', 'LAB', 'MAIN', 'CTRL-UP-1', 'ADT^A01', 'processed', 'AA', 'MSH|^~\\&|GATEWAY', $3)`,
    [siteId, randomUUID(), Buffer.from('MSH|^~\\&|LAB|MAIN|GW|UP|20261122080000||ADT^A01|CTRL-UP-1|P|2.5\rPID|1||MRN-UP-1||Doe^Jane\r')],
  );
  await sql.query("INSERT INTO imaging_study (site_id, study_instance_uid, patient_id, dicom_patient_id, patient_name, study_date, modalities) VALUES ($1, $2, $3, 'MRN-UP-1', 'Doe^Jane', '2026-11-22', '{CT}')", [siteId, studyUid, patientId]);
  await sql.query("INSERT INTO imaging_series (site_id, series_instance_uid, study_instance_uid, modality, series_number) VALUES ($1, $2, $3, 'CT', 1)", [siteId, seriesUid, studyUid]);
  await sql.query(
    `INSERT INTO imaging_instance (site_id, sop_instance_uid, id, study_instance_uid, series_instance_uid, sop_class_uid, transfer_syntax_uid, instance_number, storage_path, size_bytes, sha256)
     VALUES ($1, $2, $3, $4, $5, '1.2.840.10008.5.1.4.1.1.2', '1.2.840.10008.1.2.1', 1, $6, 1024, $7)`,
    [siteId, sopUid, randomUUID(), studyUid, seriesUid, `${siteId}/${studyUid}/${seriesUid}/${sopUid}.dcm`, 'a'.repeat(64)],
  );
  await sql.query('INSERT INTO fhir_paging_secret (id, secret) VALUES (1, $1)', [randomBytes(32)]);
}

test('a backup of the oldest schema restores into an empty database, migrated forward on the way', async () => {
  const work = mkdtempSync(join(tmpdir(), 'cg-old-backup-'));
  const target = await createTestDatabase({ migrate: false });
  try {
    const storage = join(work, 'dicom');
    const manifest = await createBackup({ database: db.database, connectionString: db.connectionString, dicomStorageDir: storage }, join(work, 'backup'));
    assert.equal(manifest.schema.newestMigration, 400);
    // The instance row names a file this test never wrote: the backup says so, and goes on.
    assert.equal(manifest.dicom.missing.length, 1);
    const restored = await restoreBackup(join(work, 'backup'), { database: target.database, connectionString: target.connectionString, dicomStorageDir: join(work, 'restored-dicom') });
    assert.ok(restored.migrations.applied.includes('0002_credential_change_notifications'));
    assert.deepEqual(await countRows(target.database), manifest.counts);
    const auth = await authenticateApiKey(target.database, apiKey);
    assert.equal(auth.ok && auth.site.id, siteId, 'the API key authenticates on the restored, migrated database');
  } finally {
    await target.drop();
    rmSync(work, { recursive: true, force: true });
  }
});

test('the oldest released schema, with data in it, migrates to the newest and keeps every row readable through the domain', async () => {
  const before = await countRows(db.database);
  const report = await migrate(db.database);
  assert.ok(report.applied.length > 0, 'migrations were applied');
  assert.ok(report.applied.includes('0002_credential_change_notifications'), 'the later, lower-numbered migration is applied too');
  assert.deepEqual(await countRows(db.database), before, 'no row gained or lost');

  const auth = await authenticateApiKey(db.database, apiKey);
  assert.equal(auth.ok && auth.site.id, siteId, 'the API key still authenticates');
  const site = siteContextFor(await resolveSite(db.database, siteId), { kind: 'operator' });
  assert.equal(site.aeTitle, 'UPGRADE1');
  assert.equal((await readPatientByBusinessIdentifier(db.database, site, 'MRN-UP-1'))?.id, patientId);
  assert.deepEqual((await searchPatients(db.database, site, { identifier: 'MRN-UP-1', limit: 10 })).map((patient) => patient.id), [patientId]);
  const observation = await readCurrent<Observation>(db.database, site, 'Observation', observationId);
  assert.equal(observation?.valueQuantity?.value, 5.4);
  assert.deepEqual((await readPatientCompartment(db.database, site, patientId)).map((resource) => resource.id), [observationId]);
  const worklist = await listWorklist(db.database, site, { limit: 10, offset: 0 });
  assert.deepEqual(worklist.studies.map((study) => [study.studyInstanceUid, study.patientId, study.instanceCount]), [[studyUid, patientId, 1]]);
  const messages = await listMessages(db.database, site, { limit: 10 });
  assert.deepEqual(messages.messages.map((message) => message.controlId), ['CTRL-UP-1']);
  assert.deepEqual((await listIntegrationClients(db.database, siteId)).map((client) => client.name), ['lab feed']);
});
