import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createSession } from '../../src/admin/session/session-store.ts';
import { authenticateApiKey } from '../../src/domain/keys/api-keys.ts';
import { findUserById } from '../../src/domain/users/users.ts';
import { queueExport } from '../../src/domain/bulk-export/export-jobs.ts';
import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import { receivedInstance } from '../domain/imaging/fixtures.ts';
import { authenticateAutomationToken } from '../../src/domain/keys/automation-tokens.ts';
import { findSiteById, siteContextFor } from '../../src/domain/sites/sites.ts';
import { runCli, runCliJson } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';

let db: TestDatabase;
let env: NodeJS.ProcessEnv;
before(async () => {
  db = await createTestDatabase();
  env = { CG_DATABASE_URL: db.connectionString };
});
after(() => db.drop());

const unique = () => Math.random().toString(36).slice(2, 8).toUpperCase();

async function newSite(): Promise<{ id: string; name: string; ae_title: string }> {
  const tag = unique();
  return runCliJson(['site', 'create', '--name', `Site ${tag}`, '--ae-title', `S${tag}`], env);
}

/** A refusal: the exit status, nothing on stdout, and with --json the error document on stderr. */
async function refused(args: string[], status: number, code: string, message: RegExp): Promise<void> {
  const result = await runCli([...args, '--json'], env);
  assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
  assert.equal(result.stdout, '', args.join(' '));
  const { error } = JSON.parse(result.stderr) as { error: { code: string; message: string } };
  assert.equal(error.code, code, args.join(' '));
  assert.match(error.message, message, args.join(' '));
}

async function auditActions(targetId: string): Promise<{ actor: string; action: string }[]> {
  const { rows } = await db.database.query<{ actor: string; action: string }>('SELECT actor, action FROM audit_event WHERE target_id = $1 ORDER BY id', [targetId]);
  return rows;
}

test('site show and site update of the AE title, policies and retention, audited as the operator', async () => {
  const site = await newSite();
  const ae = `N${unique()}`;
  const updated = await runCliJson<Record<string, unknown>>(
    ['site', 'update', site.name, '--ae-title', ae, '--patient-put-creates', '--allow-any-ip', '--data-access-retention-days', '400'],
    env,
  );
  // The admin API's shape of a site (siteJson), so a script reads both alike.
  assert.deepEqual(Object.keys(updated).sort(), ['ae_title', 'created_at', 'data_access_retention_days', 'export_retention_hours', 'id', 'message_body_retention_days', 'mllp_allow_any_ip', 'name', 'offboarding_marked_at', 'patient_put_creates', 'purge_after', 'refused_traffic_retention_days', 'time_zone', 'updated_at']);
  assert.deepEqual([updated.ae_title, updated.patient_put_creates, updated.mllp_allow_any_ip, updated.data_access_retention_days], [ae, true, true, 400]);
  const off = await runCliJson<Record<string, unknown>>(['site', 'update', site.id, '--no-patient-put-creates'], env);
  assert.deepEqual([off.patient_put_creates, off.mllp_allow_any_ip], [false, true]);
  assert.deepEqual(await runCliJson(['site', 'show', site.id], env), off);
  assert.deepEqual(await auditActions(site.id), [
    { actor: 'operator', action: 'site.created' },
    { actor: 'operator', action: 'site.updated' },
    { actor: 'operator', action: 'site.updated' },
  ]);
  const text = await runCli(['site', 'show', site.id], env);
  assert.match(text.stdout, /^ae_title: /m);
  await refused(['site', 'update', site.id, '--allow-any-ip', '--no-allow-any-ip'], 2, 'usage', /contradict/);
  await refused(['site', 'update', site.id, '--data-access-retention-days', 'ten'], 2, 'usage', /whole number/);
  await refused(['site', 'update', site.id, '--data-access-retention-days', '0'], 1, 'invalid', /retention|days/);
  await refused(['site', 'update', site.id, '--ae-title', 'WAY_TOO_LONG_AE_TITLE'], 1, 'invalid', /at most 16 characters/);
  await refused(['site', 'show', 'no such site'], 1, 'not-found', /no site/);
  await refused(['site', 'show'], 2, 'usage', /site show needs the site/);
});

test('user update changes the role and deactivates; user password resets and ends sessions; another site\'s user is not found', async () => {
  const [site, other] = [await newSite(), await newSite()];
  const email = `${unique().toLowerCase()}@clinic.test`;
  const user = await runCliJson<{ id: string }>(['user', 'create', '--site', site.id, '--email', email, '--role', 'clinician'], env);
  const promoted = await runCliJson<Record<string, unknown>>(['user', 'update', email, '--site', site.name, '--role', 'admin'], env);
  assert.deepEqual(promoted, { id: user.id, email, role: 'site-admin', site_id: site.id, active: true });
  const deactivated = await runCliJson<{ active: boolean }>(['user', 'update', user.id, '--deactivate'], env);
  assert.equal(deactivated.active, false);
  assert.equal((await runCliJson<{ active: boolean }>(['user', 'update', user.id, '--reactivate'], env)).active, true);
  await createSession(db.database, (await findUserById(db.database, user.id))!, {}, 1800);
  const reset = await runCliJson<{ id: string; password: string; sessions_ended: boolean }>(['user', 'password', email, '--site', site.id], env);
  assert.equal(reset.id, user.id);
  assert.ok(reset.password.length >= 12);
  const { rows } = await db.database.query('SELECT 1 FROM admin_session WHERE user_id = $1', [user.id]);
  assert.equal(rows.length, 0, 'the user\'s sessions ended');
  const chosen = await runCliJson<Record<string, unknown>>(['user', 'password', email, '--password', 'a long enough passphrase 42'], env);
  assert.equal(chosen.password, undefined, 'a chosen password is not echoed');
  assert.deepEqual((await auditActions(user.id)).map((row) => `${row.actor} ${row.action}`), [
    'operator user.created',
    'operator user.updated',
    'operator user.updated',
    'operator user.updated',
    'operator user.password-changed',
    'operator user.password-changed',
  ]);
  await refused(['user', 'update', email, '--site', other.id, '--deactivate'], 1, 'not-found', /in this site/);
  await refused(['user', 'password', email, '--site', other.id], 1, 'not-found', /in this site/);
  await refused(['user', 'update', email], 2, 'usage', /--role, or --deactivate/);
  await refused(['user', 'update', email, '--deactivate', '--reactivate'], 2, 'usage', /contradict/);
  await refused(['user', 'update', email, '--role', 'wizard'], 1, 'invalid', /role/);
  await refused(['user', 'update', email, '--role', 'service-admin'], 1, 'invalid', /does not fit/);
  await refused(['user', 'password', email, '--password', 'short'], 1, 'invalid', /12|characters/);
  await refused(['user', 'password'], 2, 'usage', /needs the user/);
});

test('a deactivated user\'s API key stops working; client update disables and enables; another site\'s client and key are not found', async () => {
  const [site, other] = [await newSite(), await newSite()];
  const email = `${unique().toLowerCase()}@clinic.test`;
  await runCliJson(['user', 'create', '--site', site.id, '--email', email], env);
  const key = await runCliJson<{ id: string; key: string }>(['key', 'create', '--site', site.id, '--user', email], env);
  await db.database.credentialChanges.listening();
  const beforeDeactivation = db.database.credentialChanges.token()!;
  await runCliJson(['user', 'update', email, '--deactivate'], env);
  await db.database.credentialChanges.changedSince(beforeDeactivation);
  assert.deepEqual(await authenticateApiKey(db.database, key.key), { ok: false, reason: 'revoked' });

  const client = await runCliJson<{ id: string; enabled: boolean }>(['client', 'create', '--site', site.id, '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '10.9.0.1'], env);
  assert.equal(client.enabled, true);
  const disabled = await runCliJson<{ id: string; enabled: boolean; name: string }>(['client', 'update', 'lab', '--site', site.name, '--disable'], env);
  assert.deepEqual([disabled.id, disabled.enabled, disabled.name], [client.id, false, 'lab']);
  assert.equal((await runCliJson<{ enabled: boolean }>(['client', 'update', client.id, '--site', site.id, '--enable'], env)).enabled, true);
  assert.deepEqual((await auditActions(client.id)).map((row) => row.actor), ['operator', 'operator', 'operator']);
  await refused(['client', 'update', client.id, '--site', other.id, '--disable'], 1, 'not-found', /client/);
  await refused(['client', 'update', 'lab', '--site', site.id, '--enable', '--disable'], 2, 'usage', /contradict/);
  await refused(['key', 'revoke', key.id, '--site', other.id], 1, 'not-found', /no API key/);
  const revoked = await runCliJson<{ id: string; revoked_at: string }>(['key', 'revoke', key.id, '--site', site.id], env);
  assert.ok(revoked.revoked_at);
});

test('automation-token create shows the token once, list never, revoke by id or prefix; bad expiry and unknown token refused', async () => {
  const created = await runCliJson<Record<string, unknown> & { id: string; prefix: string; token: string }>(['automation-token', 'create', '--label', 'fleet', '--expires', '90d'], env);
  assert.deepEqual(Object.keys(created).sort(), ['created_at', 'expires_at', 'id', 'label', 'last_used_at', 'prefix', 'revoked_at', 'token']);
  assert.match(created.token, /^cgat_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  assert.equal((await authenticateAutomationToken(db.database, created.token)).ok, true);
  const listed = await runCliJson<{ id: string; prefix: string }[]>(['automation-token', 'list'], env);
  assert.ok(listed.some((token) => token.id === created.id && token.prefix === created.prefix));
  assert.equal(JSON.stringify(listed).includes(created.token.slice(-43)), false, 'listing never shows the secret');
  const { rows } = await db.database.query<{ secret_hash: Buffer }>('SELECT secret_hash FROM automation_token WHERE id = $1', [created.id]);
  assert.equal(rows[0]!.secret_hash.includes(Buffer.from(created.token.slice(-43))), false);
  const revoked = await runCliJson<{ revoked_at: string | null }>(['automation-token', 'revoke', created.prefix], env);
  assert.ok(revoked.revoked_at);
  const second = await runCliJson<{ id: string }>(['automation-token', 'create'], env);
  assert.ok((await runCliJson<{ revoked_at: string | null }>(['automation-token', 'revoke', second.id], env)).revoked_at);
  assert.deepEqual((await auditActions(created.id)).map((row) => `${row.actor} ${row.action}`), ['operator automation-token.created', 'operator automation-token.revoked']);
  await refused(['automation-token', 'create', '--expires', 'soon'], 1, 'invalid', /ISO 8601/);
  await refused(['automation-token', 'create', '--expires', '2001-01-01T00:00:00Z'], 1, 'invalid', /future/);
  await refused(['automation-token', 'revoke', 'cgat_000000000000'], 1, 'not-found', /no automation token/);
  await refused(['automation-token', 'revoke', 'nonsense'], 1, 'not-found', /no automation token/);
  await refused(['automation-token', 'revoke'], 2, 'usage', /id or prefix/);
  await refused(['automation-token', 'rotate'], 2, 'usage', /needs one of: create, list, revoke/);
});

test('audit changes pages the site\'s and the service\'s audit log; connectivity show gives what a modality needs', async () => {
  const [site, other] = [await newSite(), await newSite()];
  for (const zone of ['Europe/Paris', 'Europe/Berlin', 'Europe/Rome']) await runCliJson(['site', 'update', site.id, '--time-zone', zone], env);
  const first = await runCliJson<{ events: { id: string; site_id: string; actor: string; action: string; details: Record<string, unknown> }[]; next_before?: string }>(['audit', 'changes', '--site', site.name, '--limit', '2'], env);
  assert.deepEqual(first.events.map((event) => [event.action, event.actor, event.site_id]), [['site.updated', 'operator', site.id], ['site.updated', 'operator', site.id]]);
  assert.deepEqual(first.events[0]!.details, { timeZone: 'Europe/Rome' });
  assert.ok(first.next_before);
  const second = await runCliJson<{ events: { action: string }[]; next_before?: string }>(['audit', 'changes', '--site', site.id, '--limit', '2', '--before', first.next_before!], env);
  assert.deepEqual(second.events.map((event) => event.action), ['site.updated', 'site.created']);
  const service = await runCliJson<{ events: { site_id: string | null }[] }>(['audit', 'changes', '--limit', '500'], env);
  assert.ok(service.events.some((event) => event.site_id === other.id), 'the whole service\'s log');
  await refused(['audit', 'changes', '--limit', '0'], 2, 'usage', /--limit/);
  await refused(['audit', 'changes', '--before', 'yesterday'], 2, 'usage', /--before/);
  await refused(['audit', 'changes', '--site', 'no such site'], 1, 'not-found', /no site/);

  const connectivity = await runCliJson<{ dicom: Record<string, unknown>; mllp: Record<string, unknown> }>(['connectivity', 'show', '--site', site.id], {
    ...env,
    CG_DICOM_PUBLIC_HOST: 'pacs.example.org',
    CG_DICOM_PUBLIC_PORT: '104',
  });
  assert.deepEqual(connectivity, { dicom: { host: 'pacs.example.org', port: 104, called_ae_title: site.ae_title, listening: true }, mllp: { port: 2575, listening: true } });
  await refused(['connectivity', 'show'], 2, 'usage', /--site is required/);
  await refused(['connectivity', 'show', '--site', 'no such site'], 1, 'not-found', /no site/);
});

test('exports list and cancel a site\'s bulk exports; another site\'s export is not found', async () => {
  const [site, other] = [await newSite(), await newSite()];
  const context = siteContextFor((await findSiteById(db.database, site.id))!, { kind: 'operator' });
  const job = (await queueExport(db.database, context, { level: 'system', resourceTypes: ['Patient'], since: undefined, outputFormat: 'application/fhir+ndjson', requestUrl: '/fhir/$export', requestedFrom: '127.0.0.1' }, 2))!;
  const listed = await runCliJson<Record<string, unknown>[]>(['exports', 'list', '--site', site.id], env);
  assert.deepEqual(listed.map((entry) => [entry.id, entry.level, entry.state, entry.resource_types]), [[job.id, 'system', 'queued', ['Patient']]]);
  assert.deepEqual(await runCliJson(['exports', 'list', '--site', other.id], env), []);
  await refused(['exports', 'cancel', job.id, '--site', other.id], 1, 'not-found', /no export/);
  assert.deepEqual(await runCliJson(['exports', 'cancel', job.id, '--site', site.name], env), { id: job.id, deleted: true });
  assert.deepEqual(await runCliJson(['exports', 'list', '--site', site.id], env), []);
  assert.deepEqual((await auditActions(job.id)).map((row) => `${row.actor} ${row.action}`), ['operator bulk-export.cancelled']);
  await refused(['exports', 'cancel', job.id, '--site', site.id], 1, 'not-found', /no export/);
  await refused(['exports', 'cancel', '--site', site.id], 2, 'usage', /needs the export id/);
});

test('report update replaces a draft\'s text and report complete signs it, with version checks; another site\'s report is not found', async () => {
  const [site, other] = [await newSite(), await newSite()];
  const context = siteContextFor((await findSiteById(db.database, site.id))!, { kind: 'operator' });
  const instance = receivedInstance();
  await db.database.transaction((tx) => indexInstance(tx, context, instance));
  const email = `${unique().toLowerCase()}@clinic.test`;
  await runCliJson(['user', 'create', '--site', site.id, '--email', email, '--role', 'clinician'], env);
  const draft = await runCliJson<{ id: string; version: number; status: string }>(['report', 'create', '--site', site.id, '--study', instance.studyInstanceUid, '--text', 'Preliminary.'], env);
  assert.equal(draft.status, 'draft');
  const updated = await runCliJson<{ id: string; version: number; status: string }>(['report', 'update', draft.id, '--site', site.id, '--text', 'No acute findings.', '--version', String(draft.version)], env);
  assert.deepEqual([updated.id, updated.status, updated.version], [draft.id, 'draft', draft.version + 1]);
  await refused(['report', 'update', draft.id, '--site', site.id, '--text', 'Stale.', '--version', String(draft.version)], 1, 'precondition-failed', /./);
  await refused(['report', 'complete', draft.id, '--site', other.id, '--author', email], 1, 'not-found', /./);
  await refused(['report', 'update', draft.id, '--site', site.id], 2, 'usage', /--text is required/);
  await refused(['report', 'complete', draft.id, '--site', site.id, '--version', 'one'], 2, 'usage', /whole number/);
  const completed = await runCliJson<Record<string, unknown>>(['report', 'complete', draft.id, '--site', site.id, '--author', email], env);
  assert.equal(completed.status, 'completed');
  assert.ok(completed.completed_at);
  assert.ok(completed.author_user_id);
  await refused(['report', 'update', draft.id, '--site', site.id, '--text', 'Too late.'], 1, 'conflict', /./);
});
