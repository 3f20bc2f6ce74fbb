import { randomUUID } from 'node:crypto';
import { Database, noteCredentialChange, type Queryable } from '../../storage/database.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../site-context.ts';
import { siteColumns, toSite, type Site, type SiteRow } from '../sites/sites.ts';
import { isUuid } from '../uuid.ts';
import { hashSecret, newCredential, secretMatches } from './secrets.ts';

// A key reads cg_<prefix>_<secret> (see ./secrets.ts).
const keyPattern = /^cg_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface ApiKey {
  id: string;
  siteId: string;
  userId: string;
  prefix: string;
  label: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

interface ApiKeyRow {
  id: string;
  site_id: string;
  user_id: string;
  prefix: string;
  label: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const columns = 'id, site_id, user_id, prefix, label, created_at, last_used_at, revoked_at';

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    siteId: row.site_id,
    userId: row.user_id,
    prefix: `cg_${row.prefix}`,
    label: row.label,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export async function createApiKey(
  db: Queryable,
  input: { siteId: string; userId: string; label?: string },
  actor: Actor,
): Promise<{ apiKey: ApiKey; key: string }> {
  const { rows: users } = await db.query<{ site_id: string | null; active: boolean }>('SELECT site_id, active FROM app_user WHERE id = $1', [input.userId]);
  const owner = users[0];
  // Another site's user answers exactly like one that does not exist (issue 26 point 11).
  if (!owner || owner.site_id !== input.siteId) throw new DomainError('not-found', 'no such user in this site', [{ message: 'no such user in this site', location: 'user' }]);
  if (!owner.active) throw new DomainError('invalid', 'the user is deactivated', [{ message: 'the user is deactivated', location: 'user' }]);
  const label = (input.label ?? '').trim();
  if (label.length > 200) throw new DomainError('invalid', 'the label must be at most 200 characters', [{ message: 'too long', location: 'label' }]);
  const { prefix, secret } = newCredential();
  const { rows } = await db.query<ApiKeyRow>(
    `INSERT INTO api_key (id, site_id, user_id, prefix, secret_hash, label) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${columns}`,
    [randomUUID(), input.siteId, input.userId, prefix, hashSecret(secret), label],
  );
  const apiKey = toApiKey(rows[0]!);
  await recordAudit(db, { siteId: input.siteId, actor, action: 'api-key.created', targetType: 'api-key', targetId: apiKey.id, details: { prefix: apiKey.prefix, label, userId: input.userId } });
  return { apiKey, key: `cg_${prefix}_${secret}` };
}

export async function revokeApiKey(db: Queryable, keyId: string, actor: Actor, options: { siteId?: string } = {}): Promise<ApiKey> {
  if (!isUuid(keyId)) throw new DomainError('not-found', `no API key with id "${keyId}"`);
  const { rows } = await db.query<ApiKeyRow>(
    `UPDATE api_key SET revoked_at = coalesce(revoked_at, now())
     WHERE id = $1 AND ($2::uuid IS NULL OR site_id = $2) RETURNING ${columns}`,
    [keyId, options.siteId ?? null],
  );
  if (!rows[0]) throw new DomainError('not-found', `no API key with id "${keyId}"`);
  const apiKey = toApiKey(rows[0]);
  noteCredentialChange(db);
  await recordAudit(db, { siteId: apiKey.siteId, actor, action: 'api-key.revoked', targetType: 'api-key', targetId: apiKey.id, details: { prefix: apiKey.prefix } });
  return apiKey;
}

export async function listApiKeys(db: Queryable, siteId: string): Promise<(ApiKey & { userEmail: string })[]> {
  const { rows } = await db.query<ApiKeyRow & { email: string }>(
    `SELECT k.id, k.site_id, k.user_id, k.prefix, k.label, k.created_at, k.last_used_at, k.revoked_at, u.email
     FROM api_key k JOIN app_user u ON u.id = k.user_id WHERE k.site_id = $1 ORDER BY k.created_at DESC`,
    [siteId],
  );
  return rows.map((row) => ({ ...toApiKey(row), userEmail: row.email }));
}

export type KeyAuthentication =
  | { ok: true; keyId: string; userId: string; site: Site }
  | { ok: false; reason: 'missing' | 'malformed' | 'unknown' | 'revoked' };

// last_used_at is for operators, not an access log: it is written at most once a minute per key,
// and this process remembers when it last wrote, so that a busy key costs no write at all.
const lastUsedWrites = new Map<string, number>();
const lastUsedInterval = 60_000;
const maxRememberedKeys = 10_000;

function shouldRecordUse(keyId: string, now: number): boolean {
  const last = lastUsedWrites.get(keyId);
  if (last !== undefined && now - last < lastUsedInterval) return false;
  if (lastUsedWrites.size >= maxRememberedKeys) lastUsedWrites.clear();
  lastUsedWrites.set(keyId, now);
  return true;
}

type KeyRow = SiteRow & { key_id: string; user_id: string; secret_hash: Buffer; revoked_at: Date | null; active: boolean };

/**
 * What authenticated a key prefix recently, with the change-feed token read before it was read
 * from the database: any committed change to keys, users or sites (any process) makes every
 * entry stale (migrations 0002 and 0571 notify, src/storage/change-feed.ts listens). The age limit
 * only bounds how long an entry can live should a notification ever be missed.
 *
 * Prefixes that matched no key are remembered the same way (a negative cache), so that a prefix
 * tried again costs what a known one costs: no statement. Without it an unknown prefix took a
 * database round trip every time and a known one none, and timing told them apart (issue 26
 * point 10). Unknown prefixes are remembered in a map of their own, bounded and forgetting the
 * oldest first, so that sending random prefixes cannot push known keys out of theirs.
 */
interface CachedKey {
  row: KeyRow | undefined;
  token: number;
  readAt: number;
}
interface KeyCaches {
  known: Map<string, CachedKey>;
  unknown: Map<string, CachedKey>;
}
const cachedKeys = new WeakMap<Database, KeyCaches>();
const maxCacheAgeMs = 60_000;
const maxRememberedUnknownPrefixes = 10_000;

function cachesOf(db: Database): KeyCaches {
  let caches = cachedKeys.get(db);
  if (!caches) cachedKeys.set(db, (caches = { known: new Map(), unknown: new Map() }));
  return caches;
}

async function findKeyRow(db: Queryable, prefix: string): Promise<KeyRow | undefined> {
  const token = db instanceof Database ? db.credentialChanges.token() : undefined;
  const now = Date.now();
  const caches = token !== undefined && db instanceof Database ? cachesOf(db) : undefined;
  if (caches) {
    const cached = caches.known.get(prefix) ?? caches.unknown.get(prefix);
    if (cached && cached.token === token && now - cached.readAt < maxCacheAgeMs) return cached.row;
  }
  const { rows } = await db.query<KeyRow>({
    name: 'api-key-authenticate',
    text: `SELECT k.id AS key_id, k.user_id, k.secret_hash, k.revoked_at, u.active, ${siteColumns('s')}
           FROM api_key k JOIN app_user u ON u.id = k.user_id JOIN site s ON s.id = k.site_id WHERE k.prefix = $1`,
    values: [prefix],
  });
  const row = rows[0];
  if (caches && token !== undefined) {
    const entry = { row, token, readAt: now };
    if (row) {
      if (caches.known.size >= maxRememberedKeys) caches.known.clear();
      caches.known.set(prefix, entry);
    } else {
      caches.unknown.delete(prefix);
      if (caches.unknown.size >= maxRememberedUnknownPrefixes) caches.unknown.delete(caches.unknown.keys().next().value!);
      caches.unknown.set(prefix, entry);
    }
  }
  return row;
}

/**
 * Checks an X-API-Key value: the key, its owner and its site, read with one statement or taken
 * from the cache above. The secret is checked against the stored hash on every request, and a
 * revocation, a deactivated owner or a changed site takes effect as soon as its commit is
 * notified (milliseconds), in this process or any other.
 */
export async function authenticateApiKey(db: Queryable, presented: string | undefined): Promise<KeyAuthentication> {
  if (presented === undefined || presented === '') return { ok: false, reason: 'missing' };
  const match = keyPattern.exec(presented.trim());
  if (!match) return { ok: false, reason: 'malformed' };
  const [, prefix, secret] = match;
  const row = await findKeyRow(db, prefix!);
  if (!secretMatches(hashSecret(secret!), row?.secret_hash) || !row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at !== null || !row.active) return { ok: false, reason: 'revoked' };
  if (shouldRecordUse(row.key_id, Date.now())) {
    db.query(
      `UPDATE api_key SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [row.key_id],
    ).catch(() => {});
  }
  return { ok: true, keyId: row.key_id, userId: row.user_id, site: toSite(row) };
}

/**
 * For recording a refused request (src/domain/refused-traffic): the presented key's public
 * prefix and, when a key has that prefix, its site. Never the secret. Undefined for text that is
 * not shaped like a key. Read through the same cache as authentication, so a flood of one
 * refused key costs no query per request.
 */
export async function refusedKeyOrigin(db: Queryable, presented: string | undefined): Promise<{ keyPrefix: string; siteId?: string } | undefined> {
  const match = presented === undefined ? null : keyPattern.exec(presented.trim());
  if (!match) return undefined;
  const row = await findKeyRow(db, match[1]!);
  return { keyPrefix: `cg_${match[1]}`, ...(row ? { siteId: toSite(row).id } : {}) };
}
