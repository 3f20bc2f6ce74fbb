// Issue 24 point 5: with CG_WORKERS=2 a scrape of /metrics, whichever worker answers it, reports
// every worker's counters (summed by the supervisor), including MLLP and DICOM traffic.
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
const running = useTwoWorkerService('cg-metrics-', ['fhir', 'hl7', 'admin', 'mllp', 'dicom']);

function sample(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const found = Object.fromEntries([...line.slice(name.length + 1, line.lastIndexOf('}')).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((match) => [match[1], match[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

test('every scrape reports the traffic of both workers: HTTP, MLLP, DICOM associations and instances', async () => {
  const { service, env } = running;
  await runCliJson(['site', 'create', '--name', 'Quay', '--ae-title', 'QUAY'], env);
  await runCliJson(['client', 'create', '--site', 'Quay', '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '127.0.0.1', '--sending-application', 'LAB'], env);
  const metadata = 12;
  for (let i = 0; i < metadata; i++) assert.equal((await send(`http://127.0.0.1:${service.ports.fhir}/fhir/metadata`)).status, 200);

  const message = join(env.CG_DATA_DIR!, 'adt.hl7');
  writeFileSync(message, [`MSH|^~\\&|LAB|QUAYLAB|GATEWAY|QUAY|20240102030405||ADT^A04^ADT_A01|M-${randomUUID()}|P|2.5.1`, 'PID|1||Q-1||Quay^Ann||19800101|F'].join('\r'));
  assert.match((await exec('mllp_send', ['--loose', '--file', message, '--port', String(service.ports.mllp), '127.0.0.1'])).stdout, /MSA\|AA\|/);
  const intruder = join(env.CG_DATA_DIR!, 'intruder.hl7');
  writeFileSync(intruder, [`MSH|^~\\&|INTRUDER|QUAYLAB|GATEWAY|QUAY|20240102030405||ADT^A04^ADT_A01|M-${randomUUID()}|P|2.5.1`, 'PID|1||Q-2||Quay^Bo||19800101|M'].join('\r'));
  assert.match((await exec('mllp_send', ['--loose', '--file', intruder, '--port', String(service.ports.mllp), '127.0.0.1'])).stdout, /MSA\|AR\|/, 'MSH-3 of no client');

  const study = `1.2.826.0.1.3680043.10.24.${Date.now()}`;
  const instance = join(env.CG_DATA_DIR!, 'instance.dcm');
  await writeSyntheticInstance(instance, { study, series: `${study}.1`, instance: `${study}.1.1` }, 4, 4);
  await exec('storescu', ['-aet', 'MODALITY1', '-aec', 'QUAY', '127.0.0.1', String(service.ports.dicom), instance]);
  await exec('echoscu', ['-aet', 'MODALITY1', '-aec', 'QUAY', '127.0.0.1', String(service.ports.dicom)]);
  await assert.rejects(exec('echoscu', ['-aet', 'MODALITY1', '-aec', 'NOBODY', '127.0.0.1', String(service.ports.dicom)]));

  // Fresh connections: the supervisor hands them to the workers in turn, so both answer scrapes.
  for (let scrape = 0; scrape < 4; scrape++) {
    const answer = await send(`http://127.0.0.1:${service.ports.admin}/metrics`);
    assert.equal(answer.status, 200, answer.body);
    const text = answer.body;
    assert.equal(sample(text, 'cg_http_request_duration_seconds_count', { surface: 'fhir', route: '/fhir/metadata', status_code: '200' }), metadata, 'summed over the workers');
    assert.equal(sample(text, 'cg_hl7_messages_total', { version: 'v2', transport: 'mllp', message_type: 'ADT^A04', outcome: 'AA' }), 1);
    assert.equal(sample(text, 'cg_hl7_messages_total', { version: 'v2', transport: 'mllp', message_type: 'ADT^A04', outcome: 'refused' }), 1);
    assert.ok(!text.includes('INTRUDER') && !text.includes('QUAY'), 'no sender or site name in the scrape');
    assert.equal(sample(text, 'cg_dicom_associations_total', { outcome: 'accepted' }), 2);
    assert.equal(sample(text, 'cg_dicom_associations_total', { outcome: 'rejected', reason: 'called AE title not recognised' }), 1);
    assert.equal(sample(text, 'cg_dicom_instances_total', { outcome: 'stored' }), 1);
    assert.ok(sample(text, 'cg_db_pool_connections', { pool: 'main' }) >= 2, 'the pools of both workers');
  }
});
