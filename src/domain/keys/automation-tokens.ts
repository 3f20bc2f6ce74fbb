/**
 * Service-administrator automation tokens: what a provisioning script presents to the admin JSON
 * API (Authorization: Bearer) instead of a browser session. A token has a service
 * administrator's authority over every site, belongs to no user, is shown once, is stored only as
 * a hash (./secrets.ts, as API keys), may expire, and stops working on every process as soon as
 * its revocation commits (migration 0760 notifies credentials_changed, which empties the cache
 * below).
 */
import { randomUUID } from 'node:crypto';
import { Database, noteCredentialChange, type Queryable } from '../../storage/database.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../site-context.ts';
import { isUuid } from '../uuid.ts';
import { hashSecret, newCredential, secretMatches } from './secrets.ts';

const tokenPattern = /^cgat_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const maxLabelLength = 200;
/** Ten years: further is "never", which is what omitting the expiry says. */
const maxLifetimeMs = 10 * 366 * 24 * 60 * 60 * 1000;

export interface AutomationToken {
  id: string;
  prefix: string;
  label: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

interface TokenRow {
  id: string;
  prefix: string;
  label: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const columns = 'id, prefix, label, created_at, expires_at, last_used_at, revoked_at';

function toToken(row: TokenRow): AutomationToken {
  return {
    id: row.id,
    prefix: `cgat_${row.prefix}`,
    label: row.label,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export function automationTokenActor(token: Pick<AutomationToken, 'id' | 'prefix'>): Actor {
  return { kind: 'automation-token', tokenId: token.id, prefix: token.prefix };
}

/** An expiry as given by a person or a script: an ISO 8601 time, or a number of days from now. */
export function parseExpiry(value: string, now = new Date()): Date {
  const text = value.trim();
  const days = /^(\d{1,5})d$/.exec(text);
  const expiry = days ? new Date(now.getTime() + Number(days[1]) * 86_400_000) : /^\d{4}-\d{2}-\d{2}/.test(text) ? new Date(text) : new Date(Number.NaN);
  if (Number.isNaN(expiry.getTime())) {
    throw new DomainError('invalid', 'the expiry must be an ISO 8601 time (2027-01-31T00:00:00Z) or a number of days (90d)', [{ message: 'not a time or a number of days', location: 'expires_at' }]);
  }
  return expiry;
}

export async function createAutomationToken(
  db: Queryable,
  input: { label?: string; expiresAt?: Date | null },
  actor: Actor,
): Promise<{ token: AutomationToken; secret: string }> {
  const label = (input.label ?? '').trim();
  if (label.length > maxLabelLength) throw new DomainError('invalid', `the label must be at most ${maxLabelLength} characters`, [{ message: 'too long', location: 'label' }]);
  const expiresAt = input.expiresAt ?? null;
  if (expiresAt && (expiresAt.getTime() <= Date.now() || expiresAt.getTime() > Date.now() + maxLifetimeMs)) {
    throw new DomainError('invalid', 'the expiry must be in the future and within ten years', [{ message: 'out of range', location: 'expires_at' }]);
  }
  const { prefix, secret } = newCredential();
  const { rows } = await db.query<TokenRow>(
    `INSERT INTO automation_token (id, prefix, secret_hash, label, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
    [randomUUID(), prefix, hashSecret(secret), label, expiresAt],
  );
  const token = toToken(rows[0]!);
  noteCredentialChange(db);
  await recordAudit(db, { siteId: null, actor, action: 'automation-token.created', targetType: 'automation-token', targetId: token.id, details: { prefix: token.prefix, label, expiresAt } });
  return { token, secret: `cgat_${prefix}_${secret}` };
}

export async function listAutomationTokens(db: Queryable): Promise<AutomationToken[]> {
  const { rows } = await db.query<TokenRow>(`SELECT ${columns} FROM automation_token ORDER BY created_at DESC, id`);
  return rows.map(toToken);
}

/** TOKEN: its id or its prefix (cgat_0123456789ab), as lists show them. */
export async function revokeAutomationToken(db: Queryable, idOrPrefix: string, actor: Actor): Promise<AutomationToken> {
  const prefix = /^cgat_([0-9a-f]{12})$/.exec(idOrPrefix.trim())?.[1] ?? null;
  if (!prefix && !isUuid(idOrPrefix)) throw new DomainError('not-found', `no automation token "${idOrPrefix}"`);
  const { rows } = await db.query<TokenRow>(
    `UPDATE automation_token SET revoked_at = coalesce(revoked_at, now()) WHERE ${prefix ? 'prefix = $1' : 'id = $1'} RETURNING ${columns}`,
    [prefix ?? idOrPrefix],
  );
  if (!rows[0]) throw new DomainError('not-found', `no automation token "${idOrPrefix}"`);
  const token = toToken(rows[0]);
  noteCredentialChange(db);
  await recordAudit(db, { siteId: null, actor, action: 'automation-token.revoked', targetType: 'automation-token', targetId: token.id, details: { prefix: token.prefix } });
  return token;
}

export type TokenAuthentication =
  | { ok: true; token: Pick<AutomationToken, 'id' | 'prefix'> }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

interface AuthenticationRow {
  id: string;
  secret_hash: Buffer;
  revoked_at: Date | null;
  expires_at: Date | null;
}

/**
 * Rows read recently by prefix (also "no such prefix"), valid while no credential change was
 * notified since: the same pattern as API keys, so revocation is seen at once by every process.
 */
interface CachedRow {
  row: AuthenticationRow | undefined;
  token: number;
}
const caches = new WeakMap<Database, Map<string, CachedRow>>();
const maxCachedPrefixes = 1_000;

async function findTokenRow(db: Queryable, prefix: string): Promise<AuthenticationRow | undefined> {
  const changeToken = db instanceof Database ? db.credentialChanges.token() : undefined;
  let cache: Map<string, CachedRow> | undefined;
  if (db instanceof Database && changeToken !== undefined) {
    cache = caches.get(db) ?? new Map();
    caches.set(db, cache);
    const cached = cache.get(prefix);
    if (cached && cached.token === changeToken) return cached.row;
  }
  const { rows } = await db.query<AuthenticationRow>('SELECT id, secret_hash, revoked_at, expires_at FROM automation_token WHERE prefix = $1', [prefix]);
  if (cache && changeToken !== undefined) {
    if (cache.size >= maxCachedPrefixes) cache.clear();
    cache.set(prefix, { row: rows[0], token: changeToken });
  }
  return rows[0];
}

const lastUseWrites = new Map<string, number>();

/** Checks a bearer token; the secret is compared with the stored hash on every request. */
export async function authenticateAutomationToken(db: Queryable, presented: string): Promise<TokenAuthentication> {
  const match = tokenPattern.exec(presented.trim());
  if (!match) return { ok: false, reason: 'malformed' };
  const [, prefix, secret] = match;
  const row = await findTokenRow(db, prefix!);
  if (!secretMatches(hashSecret(secret!), row?.secret_hash) || !row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
  if (row.expires_at !== null && row.expires_at.getTime() <= Date.now()) return { ok: false, reason: 'expired' };
  // last_used_at informs the list; written at most once a minute per token.
  const now = Date.now();
  if ((lastUseWrites.get(row.id) ?? 0) < now - 60_000) {
    if (lastUseWrites.size >= maxCachedPrefixes) lastUseWrites.clear();
    lastUseWrites.set(row.id, now);
    db.query('UPDATE automation_token SET last_used_at = now() WHERE id = $1', [row.id]).catch(() => {});
  }
  return { ok: true, token: { id: row.id, prefix: `cgat_${prefix}` } };
}
