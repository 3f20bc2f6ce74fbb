// The activity dashboard's sources, filled by a running service: an MLLP message records its
// integration client, an HL7 message over HTTP its API key, FHIR requests are counted per key and
// DICOM associations and instances per calling AE title (written in batches, the last at stop);
// each worker keeps a heartbeat row while it runs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { runCliJson } from '../support/cli.ts';
import { send } from '../support/fresh-connection-request.ts';
import { useTwoWorkerService } from '../support/two-worker-service.ts';
import { writeSyntheticInstance } from '../dicom/support/synthetic-instance.ts';

const exec = promisify(execFile);
const running = useTwoWorkerService('cg-activity-', ['fhir', 'hl7', 'mllp', 'dicom']);

function hl7(sender: string, patient: string): string {
  return [`MSH|^~\\&|${sender}|QUAYLAB|GATEWAY|QUAY|20240102030405||ADT^A04^ADT_A01|M-${randomUUID()}|P|2.5.1`, `PID|1||${patient}||Quay^Ann||19800101|F`].join('\r');
}

test('messages record what authenticated them; requests per key and DICOM traffic per calling AE title are counted', { timeout: 120_000 }, async () => {
  const { db, service, env } = running;
  const { id: siteId } = await runCliJson<{ id: string }>(['site', 'create', '--name', 'Quay', '--ae-title', 'QUAY'], env);
  const { id: clientId } = await runCliJson<{ id: string }>(['client', 'create', '--site', 'Quay', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1', '--sending-application', 'LAB'], env);
  await runCliJson(['user', 'create', '--site', 'Quay', '--email', 'ehr@quay.test', '--role', 'clinician'], env);
  const { id: keyId, key } = await runCliJson<{ id: string; key: string }>(['key', 'create', '--site', 'Quay', '--user', 'ehr@quay.test'], env);

  const message = join(env.CG_DATA_DIR!, 'adt.hl7');
  writeFileSync(message, hl7('LAB', 'Q-1'));
  assert.match((await exec('mllp_send', ['--loose', '--file', message, '--port', String(service.ports.mllp), '127.0.0.1'])).stdout, /MSA\|AA\|/);
  const overHttp = await fetch(`http://127.0.0.1:${service.ports.hl7}/v2/ingest`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'text/plain' }, body: hl7('EHR', 'Q-2') });
  assert.equal(overHttp.status, 200, await overHttp.text());
  assert.equal((await send(`http://127.0.0.1:${service.ports.fhir}/fhir/Patient?identifier=Q-1`, { headers: { 'x-api-key': key } })).status, 200);
  assert.equal((await send(`http://127.0.0.1:${service.ports.fhir}/fhir/Patient/not-a-patient`, { headers: { 'x-api-key': key } })).status, 404);

  const study = `1.2.826.0.1.3680043.10.24.${Date.now()}`;
  const instance = join(env.CG_DATA_DIR!, 'instance.dcm');
  await writeSyntheticInstance(instance, { study, series: `${study}.1`, instance: `${study}.1.1` }, 4, 4);
  await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'QUAY', '127.0.0.1', String(service.ports.dicom), instance]);
  const serving = await db.database.query<{ worker: number }>('SELECT worker FROM service_worker ORDER BY worker');
  assert.deepEqual(serving.rows, [{ worker: 1 }, { worker: 2 }], 'each worker keeps its heartbeat row');
  assert.equal(await service.stop(), 0, 'a clean stop writes the counts still in memory');
  assert.equal((await db.database.query('SELECT 1 FROM service_worker')).rowCount, 0, 'and removes the heartbeat rows');

  const logged = await db.database.query<{ transport: string; client_id: string | null; api_key_id: string | null }>(
    'SELECT transport, client_id, api_key_id FROM inbound_message WHERE site_id = $1 ORDER BY transport',
    [siteId],
  );
  assert.deepEqual(logged.rows, [{ transport: 'http', client_id: null, api_key_id: keyId }, { transport: 'mllp', client_id: clientId, api_key_id: null }]);
  const counted = await db.database.query<{ sender_kind: string; sender: string; surface: string; measure: string; accepted: number; errored: number }>(
    `SELECT sender_kind, sender, surface, measure, sum(accepted)::int AS accepted, sum(errored)::int AS errored FROM traffic_minute
      WHERE site_id = $1 GROUP BY 1, 2, 3, 4 ORDER BY 1, 3, 4`,
    [siteId],
  );
  assert.deepEqual(counted.rows, [
    { sender_kind: 'ae-title', sender: 'MODALITY1', surface: 'dicom', measure: 'association', accepted: 1, errored: 0 },
    { sender_kind: 'ae-title', sender: 'MODALITY1', surface: 'dicom', measure: 'instance', accepted: 1, errored: 0 },
    { sender_kind: 'api-key', sender: keyId, surface: 'fhir', measure: 'request', accepted: 1, errored: 1 },
    { sender_kind: 'api-key', sender: keyId, surface: 'hl7', measure: 'request', accepted: 1, errored: 0 },
  ]);
});
