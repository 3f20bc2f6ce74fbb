import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { authenticateApiKey } from '../../../src/domain/keys/api-keys.ts';
import { updateSite } from '../../../src/domain/sites/sites.ts';
import { updateUser } from '../../../src/domain/users/users.ts';
import { Database } from '../../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createTestApiKey } from '../../support/http.ts';
import { createTestSite } from '../../support/sites.ts';

let db: TestDatabase;
// A second pool on the same database stands in for another process (the CLI, another instance).
let other: Database;
before(async () => {
  db = await createTestDatabase();
  other = new Database({ connectionString: db.connectionString });
  await db.database.credentialChanges.listening();
});
after(async () => {
  await other.close();
  await db.drop();
});

const feed = () => db.database.credentialChanges;

/** The notification of a change after `token`, waited for at most 10 s (a test never hangs). */
async function notifiedSince(token: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no credential change was notified within 10 s')), 10_000);
  });
  try {
    await Promise.race([feed().changedSince(token), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function keyOfNewSite(): Promise<{ key: string; siteId: string; keyId: string; userId: string }> {
  const site = await createTestSite(db.database);
  // Creating a key notifies (migration 0571): wait for it, so that it cannot arrive between a
  // test's steps and make an entry the test expects from memory stale.
  const token = feed().token()!;
  const key = await createTestApiKey(db.database, site);
  await notifiedSince(token);
  const { rows } = await db.database.query<{ id: string; user_id: string }>('SELECT id, user_id FROM api_key WHERE site_id = $1', [site.siteId]);
  return { key, siteId: site.siteId, keyId: rows[0]!.id, userId: rows[0]!.user_id };
}

test('an authenticated key is served from the cache until a credential change is notified', async () => {
  const { key, keyId } = await keyOfNewSite();
  assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  // With the notification trigger off, a revocation behind the cache's back goes unseen: the
  // second answer comes from the cache, not from the row.
  await other.query('ALTER TABLE api_key DISABLE TRIGGER api_key_credentials_changed');
  try {
    await other.query('UPDATE api_key SET revoked_at = now() WHERE id = $1', [keyId]);
    assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  } finally {
    await other.query('ALTER TABLE api_key ENABLE TRIGGER api_key_credentials_changed');
  }
  // Any notified change makes every entry stale.
  const token = feed().token()!;
  await other.query(`UPDATE site SET updated_at = now() WHERE name = 'no such site'`);
  await feed().changedSince(token);
  assert.deepEqual(await authenticateApiKey(db.database, key), { ok: false, reason: 'revoked' });
});

test('a revocation committed by another process takes effect once notified', async () => {
  const { key, keyId } = await keyOfNewSite();
  assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  const token = feed().token()!;
  await other.query('UPDATE api_key SET revoked_at = now() WHERE id = $1', [keyId]);
  await feed().changedSince(token);
  assert.deepEqual(await authenticateApiKey(db.database, key), { ok: false, reason: 'revoked' });
});

test('changes made through this process are seen by the very next request, without waiting', async () => {
  const first = await keyOfNewSite();
  assert.equal((await authenticateApiKey(db.database, first.key)).ok, true);
  await updateUser(db.database, first.userId, { active: false }, { kind: 'operator' });
  assert.deepEqual(await authenticateApiKey(db.database, first.key), { ok: false, reason: 'revoked' });

  const second = await keyOfNewSite();
  const before = await authenticateApiKey(db.database, second.key);
  assert.equal(before.ok && before.site.policies.patientPutCreates, false);
  await updateSite(db.database, second.siteId, { patientPutCreates: true }, { kind: 'operator' });
  const afterUpdate = await authenticateApiKey(db.database, second.key);
  assert.equal(afterUpdate.ok && afterUpdate.site.policies.patientPutCreates, true);
});

test('while the notification connection is down, every request reads the database', async () => {
  const { key, keyId } = await keyOfNewSite();
  assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  const token = feed().token()!;
  await other.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                      WHERE application_name = 'clinical-gateway change feed' AND datname = current_database()`);
  await feed().changedSince(token);
  await other.query('ALTER TABLE api_key DISABLE TRIGGER api_key_credentials_changed');
  try {
    await other.query('UPDATE api_key SET revoked_at = now() WHERE id = $1', [keyId]);
    // Either still reconnecting (no cache) or reconnected (a new token, so the old entry is stale).
    assert.deepEqual(await authenticateApiKey(db.database, key), { ok: false, reason: 'revoked' });
  } finally {
    await other.query('ALTER TABLE api_key ENABLE TRIGGER api_key_credentials_changed');
  }
  await feed().listening();
  assert.notEqual(feed().token(), undefined, 'the feed reconnects');
});

test('unknown keys are not remembered, and a wrong secret for a cached prefix is refused', async () => {
  const { key } = await keyOfNewSite();
  assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  const forged = `${key.slice(0, -4)}AAAA` === key ? `${key.slice(0, -4)}BBBB` : `${key.slice(0, -4)}AAAA`;
  assert.deepEqual(await authenticateApiKey(db.database, forged), { ok: false, reason: 'unknown' });
  assert.deepEqual(await authenticateApiKey(db.database, 'cg_000000000000_' + 'A'.repeat(43)), { ok: false, reason: 'unknown' });
});

test('an unknown prefix tried again costs what a known one costs: no statement (timing cannot tell them apart)', async () => {
  const { key } = await keyOfNewSite();
  const unknown = `cg_${'0123456789ab'}_${key.slice(-43)}`;
  assert.equal((await authenticateApiKey(db.database, key)).ok, true);
  assert.deepEqual(await authenticateApiKey(db.database, unknown), { ok: false, reason: 'unknown' });
  const statements: unknown[] = [];
  const query = db.database.query.bind(db.database);
  db.database.query = ((...args: Parameters<typeof query>) => {
    statements.push(args[0]);
    return query(...args);
  }) as typeof query;
  try {
    for (let i = 0; i < 5; i++) {
      assert.equal((await authenticateApiKey(db.database, key)).ok, true);
      assert.deepEqual(await authenticateApiKey(db.database, unknown), { ok: false, reason: 'unknown' });
    }
  } finally {
    db.database.query = query;
  }
  assert.deepEqual(statements, [], 'neither the known nor the unknown prefix ran a statement');
});

test('a key created by another process after its prefix was tried is found at once', async () => {
  const site = await createTestSite(db.database);
  const { rows } = await db.database.query<{ id: string }>(
    `INSERT INTO app_user (id, site_id, email, role) VALUES (gen_random_uuid(), $1, $2, 'clinician') RETURNING id`,
    [site.siteId, `late-${site.siteId}@example.test`],
  );
  const secret = 'S'.repeat(43);
  const presented = `cg_feedbeef0001_${secret}`;
  assert.deepEqual(await authenticateApiKey(db.database, presented), { ok: false, reason: 'unknown' });
  const token = feed().token()!;
  await other.query(
    `INSERT INTO api_key (id, site_id, user_id, prefix, secret_hash) VALUES (gen_random_uuid(), $1, $2, 'feedbeef0001', sha256($3::bytea))`,
    [site.siteId, rows[0]!.id, secret],
  );
  await notifiedSince(token);
  assert.equal((await authenticateApiKey(db.database, presented)).ok, true);
});
