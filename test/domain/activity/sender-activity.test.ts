import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { after, before, test } from 'node:test';
import { aeTitleActivity, clientActivity, countedSeries, keyActivity, lastErrorAt } from '../../../src/domain/activity/sender-activity.ts';
import { maxPendingSenders, TrafficCounter } from '../../../src/domain/activity/traffic-counter.ts';
import { indexInstance } from '../../../src/domain/imaging/index-instance.ts';
import { recordMessage, type MessageOutcome } from '../../../src/domain/messages/message-log.ts';
import type { Actor, SiteContext } from '../../../src/domain/site-context.ts';
import { serviceHealth } from '../../../src/platform/service-health.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestSite } from '../../support/sites.ts';
import { receivedInstance } from '../imaging/fixtures.ts';
import { addClient, addKey } from './support.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

async function logMessage(site: SiteContext, actor: Actor, outcome: MessageOutcome, receivedAt: Date): Promise<void> {
  await db.database.transaction((tx) =>
    recordMessage(tx, { ...site, actor }, {
      protocol: 'hl7v2',
      transport: actor.kind === 'api-key' ? 'http' : 'mllp',
      sendingApplication: 'LIS',
      sendingFacility: 'MAIN',
      controlId: randomUUID(),
      messageType: 'ORU^R01',
      outcome,
      ackCode: outcome === 'processed' ? 'AA' : 'AE',
      problems: [],
      ackText: '',
      raw: Buffer.from('MSH'),
      receivedAt,
    }),
  );
}

test('HL7 messages per integration client, recorded from what authenticated them; keys recorded too; another site\'s not counted', async () => {
  const now = new Date('2026-05-01T12:00:00Z');
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const lab = await addClient(db.database, site, 'Lab analyser');
  const otherLab = await addClient(db.database, other, 'Their lab');
  const viaClient = (clientId: string): Actor => ({ kind: 'integration-client', clientId, remoteAddress: '127.0.0.1' });
  await logMessage(site, viaClient(lab), 'processed', new Date(now.getTime() - 10 * 60_000));
  await logMessage(site, viaClient(lab), 'error', new Date(now.getTime() - 3 * 3_600_000));
  await logMessage(site, viaClient(lab), 'processed', new Date(now.getTime() - 25 * 3_600_000)); // older than a day
  await logMessage(site, { kind: 'operator' }, 'processed', now); // no client (reprocessed, or logged before clients were recorded)
  await logMessage(other, viaClient(otherLab), 'processed', now);
  const key = await addKey(db.database, site, 'EHR');
  await logMessage(site, { kind: 'api-key', keyId: key.id, userId: randomUUID() }, 'processed', now);

  const clients = await clientActivity(db.database, site, now);
  assert.deepEqual(clients, [{
    clientId: lab,
    name: 'Lab analyser',
    lastHour: { received: 1, accepted: 1, errored: 0 },
    lastDay: { received: 2, accepted: 1, errored: 1 },
    lastMessageAt: new Date(now.getTime() - 10 * 60_000).toISOString(),
  }]);
  const recorded = await db.database.query<{ client_id: string | null; api_key_id: string | null }>(
    'SELECT client_id, api_key_id FROM inbound_message WHERE site_id = $1 AND received_at = $2 ORDER BY client_id NULLS LAST, api_key_id NULLS LAST',
    [site.siteId, now],
  );
  assert.deepEqual(recorded.rows, [{ client_id: null, api_key_id: key.id }, { client_id: null, api_key_id: null }]);
});

test('requests per API key from the batched counters: last hour and day, surfaces, last request and error; another site\'s not counted', async () => {
  const now = new Date();
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const key = await addKey(db.database, site, 'EHR interface');
  const theirs = await addKey(db.database, other, 'theirs');
  const counter = new TrafficCounter(db.database);
  const request = (siteId: string, keyId: string, surface: 'fhir' | 'dicomweb', ok: boolean, at: number) =>
    counter.count({ siteId, senderKind: 'api-key', sender: keyId, surface, measure: 'request', ok }, at);
  request(site.siteId, key.id, 'fhir', true, now.getTime() - 1_000);
  request(site.siteId, key.id, 'fhir', true, now.getTime() - 2_000);
  request(site.siteId, key.id, 'dicomweb', false, now.getTime() - 3_000);
  request(site.siteId, key.id, 'fhir', true, now.getTime() - 2 * 3_600_000);
  request(other.siteId, theirs.id, 'fhir', false, now.getTime() - 1_000);
  await counter.flush();
  request(site.siteId, key.id, 'fhir', false, now.getTime() - 500); // a second flush adds to the same minute's row
  await counter.flush();

  const keys = await keyActivity(db.database, site, now);
  assert.equal(keys.length, 1);
  const [activity] = keys;
  assert.equal(activity!.keyId, key.id);
  assert.equal(activity!.prefix, key.prefix);
  assert.equal(activity!.label, 'EHR interface');
  assert.deepEqual(activity!.surfaces, ['dicomweb', 'fhir']);
  assert.deepEqual(activity!.lastHour, { accepted: 2, errored: 2 });
  assert.deepEqual(activity!.lastDay, { accepted: 3, errored: 2 });
  assert.equal(activity!.lastRequestAt, new Date(now.getTime() - 500).toISOString());
  assert.equal(activity!.lastErrorAt, new Date(now.getTime() - 500).toISOString());

  const series = await countedSeries(db.database, site, now);
  const fhir = [...series.values()].reduce((sum, point) => sum + point.fhirRequests.accepted + point.fhirRequests.errored, 0);
  assert.equal(fhir, 4, 'FHIR requests in the series; DICOMweb ones are not FHIR');
  assert.equal(await lastErrorAt(db.database, site), new Date(now.getTime() - 500).toISOString());
});

test('DICOM per calling AE title: instances stored from the index, associations and failures counted, rejections from refused traffic', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  for (let i = 0; i < 2; i++) await db.database.transaction((tx) => indexInstance(tx, site, receivedInstance({ callingAeTitle: 'MODALITY1' })));
  await db.database.transaction((tx) => indexInstance(tx, other, receivedInstance({ callingAeTitle: 'MODALITY1' })));
  const counter = new TrafficCounter(db.database);
  const dicom = (siteId: string, sender: string, measure: 'association' | 'instance', ok: boolean) => counter.count({ siteId, senderKind: 'ae-title', sender, surface: 'dicom', measure, ok });
  dicom(site.siteId, 'MODALITY1', 'association', true);
  dicom(site.siteId, 'MODALITY1', 'instance', true);
  dicom(site.siteId, 'MODALITY1', 'instance', false);
  dicom(other.siteId, 'MODALITY1', 'association', true);
  await counter.flush();
  await db.database.query(
    `INSERT INTO refused_traffic (site_id, surface, kind, remote_address, reason, details, suppressed) VALUES
       ($1, 'dicom', 'dicom-association-rejected', '10.0.0.9', 'calling AE title not admitted', '{"calling_ae_title": "STRANGER", "called_ae_title": "X"}', 2),
       (NULL, 'dicom', 'dicom-called-ae-unknown', '10.0.0.9', 'called AE title not recognised', '{"calling_ae_title": "STRANGER", "called_ae_title": "Y"}', 0),
       ($2, 'dicom', 'dicom-association-rejected', '10.0.0.9', 'calling AE title not admitted', '{"calling_ae_title": "STRANGER", "called_ae_title": "Z"}', 0)`,
    [site.siteId, other.siteId],
  );

  const titles = await aeTitleActivity(db.database, site, new Date(Date.now() + 1_000));
  assert.deepEqual(titles.map((title) => [title.callingAeTitle, title.lastHour, title.lastDay]), [
    ['MODALITY1', { associations: 1, associationsRejected: 0, instancesStored: 2, instancesFailed: 1 }, { associations: 1, associationsRejected: 0, instancesStored: 2, instancesFailed: 1 }],
    ['STRANGER', { associations: 0, associationsRejected: 3, instancesStored: 0, instancesFailed: 0 }, { associations: 0, associationsRejected: 3, instancesStored: 0, instancesFailed: 0 }],
  ]);
  assert.ok(titles.every((title) => Date.parse(title.lastActivityAt) <= Date.now() + 1_000));
  const series = await countedSeries(db.database, site, new Date(Date.now() + 1_000));
  assert.deepEqual([...series.values()].reduce((sum, point) => [sum[0]! + point.instances.accepted, sum[1]! + point.instances.errored], [0, 0]), [1, 1]);
});

test('the counter is bounded in memory and rows are kept two days', async () => {
  const site = await createTestSite(db.database);
  await db.database.query(
    `INSERT INTO traffic_minute (site_id, minute, sender_kind, sender, surface, measure, accepted, last_at) VALUES ($1, now() - interval '3 days', 'ae-title', 'OLD', 'dicom', 'association', 1, now() - interval '3 days')`,
    [site.siteId],
  );
  const warnings: object[] = [];
  const counter = new TrafficCounter(db.database, { warn: (details) => warnings.push(details) });
  for (let i = 0; i <= maxPendingSenders; i++) counter.count({ siteId: site.siteId, senderKind: 'ae-title', sender: `AE${i}`, surface: 'dicom', measure: 'association', ok: true });
  await counter.flush();
  const { rows } = await db.database.query<{ n: number; old: number }>(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE sender = 'OLD')::int AS old FROM traffic_minute WHERE site_id = $1`,
    [site.siteId],
  );
  assert.deepEqual(rows[0], { n: maxPendingSenders, old: 0 });
  assert.deepEqual(warnings, [{ dropped: 1, bound: maxPendingSenders }]);
});

test('the service\'s health: the database reachable, node leases, workers and free disk space', async () => {
  await db.database.query(`INSERT INTO service_node (node_id, holder, host, pid) VALUES ('node-a', $1, 'h', 1), ('node-b', $2, 'h', 2)`, [randomUUID(), randomUUID()]);
  await db.database.query(`UPDATE service_node SET heartbeat_at = now() - interval '5 minutes' WHERE node_id = 'node-b'`);
  await db.database.query(`INSERT INTO service_worker (node_id, worker, pid, heartbeat_at) VALUES ('node-a', 1, 11, now()), ('node-a', 2, 12, now() - interval '1 minute'), ('node-b', 1, 21, now())`);
  const health = await serviceHealth(db.database, { nodeId: 'node-a', workers: 2, dataDir: tmpdir(), dicomStorageDir: '/nonexistent/for/this/test' });
  assert.equal(health.ready, true);
  assert.equal(health.answeringNode, 'node-a');
  assert.equal(health.workers, 2);
  assert.deepEqual(health.nodes.map((node) => [node.nodeId, node.lease, node.workersUp]), [['node-a', 'live', 1], ['node-b', 'expired', 1]], 'a worker whose heartbeat stopped is not up');
  assert.equal(health.disks.length, 1, 'a directory that cannot be read is left out');
  assert.equal(health.disks[0]!.name, 'data');
  assert.ok(health.disks[0]!.freeBytes > 0 && health.disks[0]!.freeBytes <= health.disks[0]!.totalBytes);
});
