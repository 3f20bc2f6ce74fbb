// The messages and refused commands as scripts use them: the admin app's filters, --json, and
// stable exit codes (0 done, 1 refused or failed, 2 usage, 3 reprocessed but not accepted).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createIntegrationClient, updateIntegrationClient } from '../../src/domain/clients/integration-clients.ts';
import { recordMessage, type NewMessage } from '../../src/domain/messages/message-log.ts';
import { RefusedTrafficRecorder } from '../../src/domain/refused-traffic/recorder.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { runCli, runCliJson } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestSite } from '../support/sites.ts';

let db: TestDatabase;
let env: NodeJS.ProcessEnv;
before(async () => {
  db = await createTestDatabase();
  env = { CG_DATABASE_URL: db.connectionString };
});
after(() => db.drop());

const message = (controlId: string, overrides: Partial<NewMessage> = {}): NewMessage => ({
  protocol: 'hl7v2', transport: 'mllp', sendingApplication: 'LAB', sendingFacility: 'MAIN', controlId, messageType: 'ADT^A01',
  outcome: 'processed', ackCode: 'AA', problems: [], ackText: `MSA|AA|${controlId}`,
  raw: Buffer.from(`MSH|^~\\&|LAB|MAIN|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|${controlId}|P|2.5.1\rPID|1||${controlId}-P^^^H^MR||Doe^Jo\r`),
  remoteAddress: '127.0.5.1', ...overrides,
});

async function seed(site: SiteContext, messages: NewMessage[]): Promise<string[]> {
  return db.database.transaction(async (tx) => {
    const ids: string[] = [];
    for (const entry of messages) ids.push((await recordMessage(tx, site, entry)).id);
    return ids;
  });
}

test('messages list filters like the admin app and pages with --after', async () => {
  const site = await createTestSite(db.database);
  await seed(site, [
    message('L1', { receivedAt: new Date('2026-03-01T08:00:00Z'), patientIdentifier: 'MRN7' }),
    message('L2', { receivedAt: new Date('2026-03-01T09:00:00Z'), outcome: 'error', ackCode: 'AE', transport: 'http' }),
    message('L3', { receivedAt: new Date('2026-03-02T09:00:00Z'), messageType: 'ORU^R01' }),
  ]);
  type Page = { messages: { control_id: string; ack: string }[]; next?: string; total: number; total_exact: boolean };
  const all = await runCliJson<Page>(['messages', 'list', '--site', site.siteId, '--limit', '2'], env);
  assert.deepEqual(all.messages.map((m) => m.control_id), ['L3', 'L2']);
  assert.equal(all.total, 3);
  const rest = await runCliJson<Page>(['messages', 'list', '--site', site.siteId, '--limit', '2', '--after', all.next!], env);
  assert.deepEqual(rest.messages.map((m) => m.control_id), ['L1']);
  const failed = await runCliJson<Page>(['messages', 'list', '--site', site.siteName, '--outcome', 'AE', '--transport', 'http'], env);
  assert.deepEqual(failed.messages.map((m) => [m.control_id, m.ack]), [['L2', 'AE']]);
  assert.deepEqual((await runCliJson<Page>(['messages', 'list', '--site', site.siteId, '--patient', 'MRN7'], env)).messages.map((m) => m.control_id), ['L1']);
  assert.deepEqual((await runCliJson<Page>(['messages', 'list', '--site', site.siteId, '--type', 'ORU^R01'], env)).messages.map((m) => m.control_id), ['L3']);
  const window = await runCliJson<Page>(['messages', 'list', '--site', site.siteId, '--from', '2026-03-01T08:30:00Z', '--to', '2026-03-02', '--sort', 'oldest'], env);
  assert.deepEqual(window.messages.map((m) => m.control_id), ['L2']);
  const jump = await runCliJson<Page>(['messages', 'list', '--site', site.siteId, '--at', '2026-03-01T08:30:00Z'], env);
  assert.deepEqual(jump.messages.map((m) => m.control_id), ['L1']);

  for (const bad of [['--outcome', 'OK'], ['--from', 'yesterday'], ['--limit', '0'], ['--after', 'x'], ['--transport', 'ftp'], ['--sort', 'up']]) {
    const result = await runCli(['messages', 'list', '--site', site.siteId, ...bad, '--json'], env);
    assert.equal(result.status, 2, bad.join(' '));
    assert.match(result.stderr, new RegExp(`--${bad[0]!.slice(2)}`));
  }
  assert.equal((await runCli(['messages', 'list', '--site', 'no such site', '--json'], env)).status, 1);
});

test('messages reprocess: 0 when accepted, 3 when the attempt fails again, 1 when refused or not found', async () => {
  const site = await createTestSite(db.database);
  const other = await createTestSite(db.database);
  const client = await createIntegrationClient(db.database, site.siteId, { name: 'Lab', protocol: 'hl7-mllp', allowedIps: '127.0.5.1', sendingFacility: 'MAIN' }, { kind: 'operator' });
  const [refused, accepted] = await seed(site, [
    message('R1', { sendingFacility: 'ANNEX', outcome: 'refused', ackCode: 'AR', raw: Buffer.from('MSH|^~\\&|LAB|ANNEX|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|R1|P|2.5.1\rPID|1||R1-P^^^H^MR||Doe^Jo\r') }),
    message('R2'),
  ]);
  const [failed] = await seed(site, [message('R3', { outcome: 'error', ackCode: 'AE', transport: 'http', raw: Buffer.from('MSH|^~\\&|LAB|MAIN|GW|SITE|20260301080000+0000||ADT^A01^ADT_A01|R3|P|2.5.1\rPID|1||^^^H^MR||Doe^Jo\r') })]);

  const notYet = await runCli(['messages', 'reprocess', refused!, '--site', site.siteId, '--json'], env);
  assert.equal(notYet.status, 1);
  const refusal = JSON.parse(notYet.stderr) as { error: { code: string; message: string } };
  assert.equal(refusal.error.code, 'business-rule');
  assert.match(refusal.error.message, /MSH-4 "ANNEX"/);
  await updateIntegrationClient(db.database, site.siteId, client.id, { sendingFacility: 'ANNEX' }, { kind: 'operator' });
  const done = await runCliJson<{ original: { id: string; reprocessed_as: string }; attempt: { id: string; ack: string; reprocess_of: string } }>(['messages', 'reprocess', refused!, '--site', site.siteId], env);
  assert.equal(done.attempt.ack, 'AA');
  assert.equal(done.attempt.reprocess_of, refused);
  assert.equal(done.original.reprocessed_as, done.attempt.id);
  const twice = await runCli(['messages', 'reprocess', refused!, '--site', site.siteId, '--json'], env);
  assert.equal(twice.status, 1);
  assert.match(twice.stderr, /already reprocessed/);

  const wasAccepted = await runCli(['messages', 'reprocess', accepted!, '--site', site.siteId, '--json'], env);
  assert.equal(wasAccepted.status, 1);
  assert.match(wasAccepted.stderr, /was accepted/);
  const again = await runCli(['messages', 'reprocess', failed!, '--site', site.siteId, '--json'], env);
  assert.equal(again.status, 3);
  assert.equal(JSON.parse(again.stdout).attempt.ack, 'AE');
  const elsewhere = await runCli(['messages', 'reprocess', failed!, '--site', other.siteId, '--json'], env);
  assert.equal(elsewhere.status, 1);
  assert.match(elsewhere.stderr, /no such message/);
  assert.equal((await runCli(['messages', 'reprocess', '--site', site.siteId], env)).status, 2);
});

test('refused list shows a site\'s entries, those of no site, or all', async () => {
  const site = await createTestSite(db.database);
  const recorder = new RefusedTrafficRecorder(db.database);
  recorder.record({ siteId: site.siteId, surface: 'http', kind: 'http-api-key-revoked', remoteAddress: '127.0.5.9', reason: 'the API key has been revoked', details: { key_prefix: 'cg_0123456789ab' } });
  recorder.record({ surface: 'dicom', kind: 'dicom-called-ae-unknown', remoteAddress: '127.0.5.8', reason: 'called AE title not recognised', details: { called_ae_title: 'NOPE', calling_ae_title: 'CT1' } });
  await recorder.settle();
  type Entries = { entries: { kind: string; site_id: string | null; details: Record<string, string> }[] };
  const mine = await runCliJson<Entries>(['refused', 'list', '--site', site.siteId], env);
  assert.deepEqual(mine.entries.map((e) => [e.kind, e.details.key_prefix]), [['http-api-key-revoked', 'cg_0123456789ab']]);
  const none = await runCliJson<Entries>(['refused', 'list', '--no-site', '--surface', 'dicom'], env);
  assert.ok(none.entries.some((e) => e.details.called_ae_title === 'NOPE' && e.site_id === null));
  assert.equal((await runCli(['refused', 'list', '--site', site.siteId, '--no-site'], env)).status, 2);
  assert.equal((await runCli(['refused', 'list', '--surface', 'ftp'], env)).status, 2);
});
