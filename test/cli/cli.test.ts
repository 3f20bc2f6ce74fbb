import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { authenticateApiKey } from '../../src/domain/keys/api-keys.ts';
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

test('site, user, key and client creation print what DESIGN.md promises, with --json', async () => {
  const name = `Clinic ${unique()}`;
  const site = await runCliJson<{ id: string; name: string; ae_title: string }>(['site', 'create', '--name', name, '--ae-title', `AE${unique()}`], env);
  assert.equal(site.name, name);
  assert.match(site.id, /^[0-9a-f-]{36}$/);
  const email = `${unique().toLowerCase()}@clinic.test`;
  const user = await runCliJson<{ id: string; email: string; role: string }>(['user', 'create', '--site', name, '--email', email, '--role', 'admin'], env);
  assert.deepEqual([user.email, user.role], [email, 'site-admin']);
  const key = await runCliJson<{ id: string; key: string }>(['key', 'create', '--site', site.id, '--user', email, '--label', 'ris'], env);
  assert.match(key.key, /^cg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  const auth = await authenticateApiKey(db.database, key.key);
  assert.equal(auth.ok && auth.site.id, site.id);
  const { rows } = await db.database.query<{ secret_hash: Buffer }>('SELECT secret_hash FROM api_key WHERE id = $1', [key.id]);
  assert.equal(rows[0]!.secret_hash.includes(Buffer.from(key.key.slice(-43))), false, 'the key itself is never stored');
  const listed = await runCliJson<{ prefix: string }[]>(['key', 'list', '--site', name], env);
  assert.equal(listed.length, 1);
  assert.equal(JSON.stringify(listed).includes(key.key), false, 'listing never shows the key');
  // The CLI is another process: this one learns of the revocation through its notification.
  await db.database.credentialChanges.listening();
  const beforeRevocation = db.database.credentialChanges.token()!;
  assert.equal((await authenticateApiKey(db.database, key.key)).ok, true);
  const revoked = await runCliJson<{ revoked_at: string }>(['key', 'revoke', key.id], env);
  assert.ok(revoked.revoked_at);
  await db.database.credentialChanges.changedSince(beforeRevocation);
  const after = await authenticateApiKey(db.database, key.key);
  assert.deepEqual(after, { ok: false, reason: 'revoked' });
  const client = await runCliJson<{ id: string; allowed_ips: string[] }>(
    ['client', 'create', '--site', name, '--name', 'lab', '--protocol', 'hl7-mllp', '--allowed-ips', '10.1.0.0/16, ::ffff:192.0.2.7', '--sending-application', 'LAB'],
    env,
  );
  assert.deepEqual(client.allowed_ips, ['10.1.0.0/16', '192.0.2.7']);
});

test('errors go to stderr with a non-zero exit and a specific message', async () => {
  const name = `Hospital ${unique()}`;
  const ae = `H${unique()}`;
  await runCliJson(['site', 'create', '--name', name, '--ae-title', ae], env);
  const cases: [string[], RegExp, number][] = [
    [['site', 'create', '--name', name, '--ae-title', `X${unique()}`], /a site with this name already exists/, 1],
    [['site', 'create', '--name', `Other ${unique()}`, '--ae-title', ae], /another site already uses this DICOM AE title/, 1],
    [['site', 'create', '--name', `Bad ${unique()}`, '--ae-title', 'WAY_TOO_LONG_AE_TITLE'], /at most 16 characters/, 1],
    [['site', 'create', '--name', `Bad ${unique()}`, '--ae-title', 'A\\B'], /backslash/, 1],
    [['site', 'create', '--name', `Bad ${unique()}`, '--ae-title', '    '], /empty or all spaces/, 1],
    [['user', 'create', '--site', 'no such site', '--email', 'x@y.test'], /no site with id or name "no such site"/, 1],
    [['client', 'create', '--site', name, '--name', 'c', '--protocol', 'hl7-mllp', '--allowed-ips', '300.1.1.1'], /"300.1.1.1" is not an IPv4\/IPv6 address/, 1],
    [['client', 'create', '--site', name, '--name', 'c', '--protocol', 'hl7-mllp', '--allowed-ips', '10.0.0.0/40'], /"10.0.0.0\/40" is not/, 1],
    [['client', 'create', '--site', name, '--name', 'c', '--protocol', 'hl7-mllp', '--allowed-ips', '*'], /policy does not permit "\*"/, 1],
    [['client', 'create', '--site', name, '--name', 'c', '--protocol', 'ftp', '--allowed-ips', '10.0.0.1'], /unknown protocol "ftp"/, 1],
    [['key', 'revoke', '8a6c3f4e-1111-4222-8333-123456789abc'], /no API key with id/, 1],
    [['key', 'revoke', 'not-an-id'], /no API key with id "not-an-id"/, 1],
    [['key', 'create', '--site', name, '--user', 'nobody@nowhere.test'], /no user with id or e-mail/, 1],
    [['site', 'create', '--name', 'x'], /--ae-title is required/, 2],
    [['site', 'explode'], /"site" needs one of: create, update, show, usage, export, offboard, purge, list/, 2],
    [['site', 'create', '--name', 'x', '--ae-title', 'Y', '--colour', 'red'], /Unknown option '--colour'/, 2],
    [['frobnicate'], /unknown command "frobnicate"/, 2],
  ];
  for (const [args, message, status] of cases) {
    const result = await runCli(args, env);
    assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
    assert.equal(result.stdout, '', `${args.join(' ')} prints nothing on stdout`);
  }
});

test('a database that is not there is a clear error, not a stack trace', async () => {
  const result = await runCli(['site', 'list'], { CG_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /the database is unavailable/);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
});

test('migrate is idempotent', async () => {
  const report = await runCliJson<{ applied: string[]; already_applied: number }>(['migrate'], env);
  assert.deepEqual(report.applied, []);
  assert.ok(report.already_applied > 0);
});

test('site create and site update take --time-zone; an empty value removes it', async () => {
  const name = `Clinic ${unique()}`;
  const created = await runCliJson<{ id: string; time_zone: string | null }>(['site', 'create', '--name', name, '--ae-title', `AE${unique()}`, '--time-zone', 'Europe/London'], env);
  assert.equal(created.time_zone, 'Europe/London');
  const aliased = await runCliJson<{ id: string; time_zone: string | null }>(['site', 'update', name, '--time-zone', 'US/Central'], env);
  assert.deepEqual([aliased.id, aliased.time_zone], [created.id, 'America/Chicago']);
  const cleared = await runCliJson<{ time_zone: string | null }>(['site', 'update', created.id, '--time-zone', ''], env);
  assert.equal(cleared.time_zone, null);
  const listed = await runCliJson<{ id: string; time_zone: string | null }[]>(['site', 'list'], env);
  assert.equal(listed.find((site) => site.id === created.id)!.time_zone, null);
});

test('site update sets the message body retention ("" keeps bodies for ever); site usage shows the storage use', async () => {
  const name = `Archive ${unique()}`;
  const created = await runCliJson<{ id: string; message_body_retention_days: number | null }>(['site', 'create', '--name', name, '--ae-title', `AE${unique()}`], env);
  assert.equal(created.message_body_retention_days, null);
  const limited = await runCliJson<{ message_body_retention_days: number | null }>(['site', 'update', name, '--message-body-retention-days', '90'], env);
  assert.equal(limited.message_body_retention_days, 90);
  const forever = await runCliJson<{ message_body_retention_days: number | null }>(['site', 'update', name, '--message-body-retention-days', ''], env);
  assert.equal(forever.message_body_retention_days, null);
  const refused = await runCli(['site', 'update', name, '--message-body-retention-days', '0'], env);
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /message body retention must be 1 to 36500 days/);
  const usage = await runCliJson<{ site_id: string; computed_at: string | null; database_rows: number; items: { item: string; rows: number }[] }>(['site', 'usage', name, '--refresh'], env);
  assert.equal(usage.site_id, created.id);
  assert.ok(usage.computed_at);
  assert.ok(usage.items.some((item) => item.item === 'audit_event' && item.rows >= 3));
});

test('site update sets the export file and refused traffic retentions ("" gives back the service-wide values)', async () => {
  const name = `Retainer ${unique()}`;
  type Retentions = { export_retention_hours: number | null; refused_traffic_retention_days: number | null };
  const created = await runCliJson<Retentions>(['site', 'create', '--name', name, '--ae-title', `AE${unique()}`], env);
  assert.deepEqual([created.export_retention_hours, created.refused_traffic_retention_days], [null, null]);
  const set = await runCliJson<Retentions>(['site', 'update', name, '--export-retention-hours', '6', '--refused-traffic-retention-days', '90'], env);
  assert.deepEqual([set.export_retention_hours, set.refused_traffic_retention_days], [6, 90]);
  const cleared = await runCliJson<Retentions>(['site', 'update', name, '--export-retention-hours', '', '--refused-traffic-retention-days', ''], env);
  assert.deepEqual([cleared.export_retention_hours, cleared.refused_traffic_retention_days], [null, null]);
  const malformed = await runCli(['site', 'update', name, '--export-retention-hours', 'six'], env);
  assert.equal(malformed.status, 2);
  assert.match(malformed.stderr, /--export-retention-hours must be a whole number of hours/);
  const outOfRange = await runCli(['site', 'update', name, '--refused-traffic-retention-days', '4000'], env);
  assert.equal(outOfRange.status, 1);
  assert.match(outOfRange.stderr, /refused traffic retention must be 1 to 3650 days/);
});

test('site offboard marks a site (--cancel unmarks it); site purge refuses within the grace period, then purges', async () => {
  const name = `Leaving ${unique()}`;
  const created = await runCliJson<{ id: string }>(['site', 'create', '--name', name, '--ae-title', `AE${unique()}`], env);
  const marked = await runCliJson<{ purge_after: string | null }>(['site', 'offboard', name, '--grace-days', '7'], env);
  assert.ok(marked.purge_after && Date.parse(marked.purge_after) > Date.now() + 6 * 86_400_000);
  const early = await runCli(['site', 'purge', name], env);
  assert.equal(early.status, 1);
  assert.match(early.stderr, /grace period lasts until/);
  assert.equal((await runCliJson<{ purge_after: string | null }>(['site', 'offboard', name, '--cancel'], env)).purge_after, null);
  await runCliJson(['site', 'offboard', name, '--grace-days', '1'], env);
  await db.database.query("UPDATE site SET purge_after = now() - interval '1 second' WHERE id = $1", [created.id]);
  const purged = await runCliJson<{ id: string; deleted: Record<string, number> }>(['site', 'purge', name], env);
  assert.equal(purged.id, created.id);
  assert.equal(purged.deleted.site, 1);
  assert.equal((await runCliJson<{ id: string }[]>(['site', 'list'], env)).some((site) => site.id === created.id), false);
});

test('client create and client update take --time-zone', async () => {
  const site = `Hospital ${unique()}`;
  await runCliJson(['site', 'create', '--name', site, '--ae-title', `AE${unique()}`, '--time-zone', 'Europe/London'], env);
  const client = await runCliJson<{ id: string; time_zone: string | null }>(
    ['client', 'create', '--site', site, '--name', 'US lab', '--protocol', 'hl7-mllp', '--allowed-ips', '192.0.2.10', '--time-zone', 'America/New_York'],
    env,
  );
  assert.equal(client.time_zone, 'America/New_York');
  const updated = await runCliJson<{ id: string; time_zone: string | null; allowed_ips: string[] }>(['client', 'update', 'us lab', '--site', site, '--time-zone', 'America/Los_Angeles'], env);
  assert.deepEqual([updated.id, updated.time_zone, updated.allowed_ips], [client.id, 'America/Los_Angeles', ['192.0.2.10']]);
  const cleared = await runCliJson<{ time_zone: string | null }>(['client', 'update', client.id, '--site', site, '--time-zone', ''], env);
  assert.equal(cleared.time_zone, null);
});

test('a name that is not an IANA time zone, or a missing target, is refused with a clear message', async () => {
  const site = `Centre ${unique()}`;
  await runCliJson(['site', 'create', '--name', site, '--ae-title', `AE${unique()}`], env);
  const cases: [string[], RegExp, number][] = [
    [['site', 'create', '--name', `Bad ${unique()}`, '--ae-title', `AE${unique()}`, '--time-zone', 'Mars/Olympus_Mons'], /"Mars\/Olympus_Mons" is not an IANA time zone name/, 1],
    [['site', 'update', site, '--time-zone', '+01:00'], /"\+01:00" is not an IANA time zone name/, 1],
    [['site', 'update', '--time-zone', 'UTC'], /site update needs the site/, 2],
    [['site', 'update', 'no such site', '--time-zone', 'UTC'], /no site with id or name "no such site"/, 1],
    [['client', 'create', '--site', site, '--name', 'x', '--protocol', 'hl7-mllp', '--allowed-ips', '192.0.2.1', '--time-zone', 'Europe/Londres'], /not an IANA time zone name/, 1],
    [['client', 'update', 'nobody', '--site', site, '--time-zone', 'UTC'], /no integration client with id or name "nobody"/, 1],
  ];
  for (const [args, message, status] of cases) {
    const result = await runCli(args, env);
    assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(' '));
    assert.equal(result.stdout, '');
  }
});
