import { randomUUID } from 'node:crypto';
import { noteCredentialChange, type Queryable } from '../../storage/database.ts';
import { uniqueViolation } from '../../storage/errors.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../site-context.ts';
import { generatePassword, hashPassword, validatePasswordStrength, verifyPassword } from './password.ts';
import { isUuid } from '../uuid.ts';

export const userRoles = ['service-admin', 'site-admin', 'clinician'] as const;
export type UserRole = (typeof userRoles)[number];

export interface User {
  id: string;
  siteId: string | null;
  email: string;
  role: UserRole;
  active: boolean;
  createdAt: Date;
  updatedAt: Date;
}

interface UserRow {
  id: string;
  site_id: string | null;
  email: string;
  role: UserRole;
  active: boolean;
  created_at: Date;
  updated_at: Date;
}

const columns = 'id, site_id, email, role, active, created_at, updated_at';
// Deliberately loose (RFC 5321 allows far more than most patterns accept): one @, no spaces.
const emailPattern = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

function toUser(row: UserRow): User {
  return { id: row.id, siteId: row.site_id, email: row.email, role: row.role, active: row.active, createdAt: row.created_at, updatedAt: row.updated_at };
}

/** CLI spelling: "admin" is a site admin. */
export function parseRole(value: string): UserRole {
  const role = value === 'admin' ? 'site-admin' : value;
  if (!(userRoles as readonly string[]).includes(role)) {
    throw new DomainError('invalid', `unknown role "${value}": use admin (site-admin), clinician or service-admin`, [{ message: 'unknown role', location: 'role' }]);
  }
  return role as UserRole;
}

export interface CreateUserInput {
  siteId: string | null;
  email: string;
  role: UserRole;
  /** Omitted: a random password is generated and returned once. */
  password?: string;
}

export async function createUser(db: Queryable, input: CreateUserInput, actor: Actor): Promise<{ user: User; generatedPassword?: string }> {
  const email = input.email.trim();
  if (!emailPattern.test(email)) throw new DomainError('invalid', 'the e-mail address is not valid', [{ message: 'the e-mail address is not valid', location: 'email' }]);
  if ((input.role === 'service-admin') !== (input.siteId === null)) {
    throw new DomainError('invalid', input.role === 'service-admin' ? 'a service admin belongs to no site' : 'a site admin or clinician belongs to a site');
  }
  const generatedPassword = input.password === undefined ? generatePassword() : undefined;
  const password = input.password ?? generatedPassword!;
  // A generated password is 144 random bits: nothing to estimate, and the estimator's dictionaries
  // (about 40 MB resident) stay unloaded in a process that only creates the first-run admin.
  const weakness = generatedPassword === undefined ? validatePasswordStrength(password, email) : undefined;
  if (weakness) throw new DomainError('invalid', weakness, [{ message: weakness, location: 'password' }]);
  try {
    const { rows } = await db.query<UserRow>(
      `INSERT INTO app_user (id, site_id, email, role, password_hash) VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
      [randomUUID(), input.siteId, email, input.role, await hashPassword(password)],
    );
    const user = toUser(rows[0]!);
    await recordAudit(db, { siteId: user.siteId, actor, action: 'user.created', targetType: 'user', targetId: user.id, details: { email, role: user.role } });
    return { user, ...(generatedPassword ? { generatedPassword } : {}) };
  } catch (error) {
    if (uniqueViolation(error)?.constraint === 'app_user_email_key') {
      throw new DomainError('conflict', 'a user with this e-mail address already exists', [{ message: 'a user with this e-mail address already exists', location: 'email' }]);
    }
    throw error;
  }
}

export async function findUserById(db: Queryable, id: string): Promise<User | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query<UserRow>(`SELECT ${columns} FROM app_user WHERE id = $1`, [id]);
  return rows[0] ? toUser(rows[0]) : undefined;
}

/** USER on the command line: a user id or an e-mail address. */
export async function resolveUser(db: Queryable, idOrEmail: string): Promise<User> {
  const byId = await findUserById(db, idOrEmail);
  if (byId) return byId;
  const { rows } = await db.query<UserRow>(`SELECT ${columns} FROM app_user WHERE lower(email) = lower($1)`, [idOrEmail.trim()]);
  if (!rows[0]) throw new DomainError('not-found', `no user with id or e-mail "${idOrEmail}"`);
  return toUser(rows[0]);
}

export async function listUsers(db: Queryable, options: { siteId?: string } = {}): Promise<User[]> {
  const { rows } = await db.query<UserRow>(
    `SELECT ${columns} FROM app_user WHERE ($1::uuid IS NULL OR site_id = $1) ORDER BY lower(email)`,
    [options.siteId ?? null],
  );
  return rows.map(toUser);
}

/** The active user with this e-mail and password, or undefined (same time either way). */
export async function authenticateUser(db: Queryable, email: string, password: string): Promise<User | undefined> {
  const { rows } = await db.query<UserRow & { password_hash: string | null }>(
    `SELECT ${columns}, password_hash FROM app_user WHERE lower(email) = lower($1)`,
    [email.trim()],
  );
  const row = rows[0];
  const ok = await verifyPassword(password, row?.password_hash ?? null);
  return ok && row && row.active ? toUser(row) : undefined;
}

export async function setPassword(db: Queryable, userId: string, password: string, actor: Actor): Promise<void> {
  const user = await findUserById(db, userId);
  if (!user) throw new DomainError('not-found', 'no such user');
  const weakness = validatePasswordStrength(password, user.email);
  if (weakness) throw new DomainError('invalid', weakness, [{ message: weakness, location: 'password' }]);
  const { rows } = await db.query<{ site_id: string | null }>(
    'UPDATE app_user SET password_hash = $2, updated_at = now() WHERE id = $1 RETURNING site_id',
    [userId, await hashPassword(password)],
  );
  if (!rows[0]) throw new DomainError('not-found', 'no such user');
  await recordAudit(db, { siteId: rows[0].site_id, actor, action: 'user.password-changed', targetType: 'user', targetId: userId });
}

export async function updateUser(db: Queryable, userId: string, input: { role?: UserRole; active?: boolean }, actor: Actor): Promise<User> {
  const current = await findUserById(db, userId);
  if (!current) throw new DomainError('not-found', 'no such user');
  const role = input.role ?? current.role;
  if ((role === 'service-admin') !== (current.siteId === null)) throw new DomainError('invalid', 'this role does not fit the user\'s site', [{ message: 'this role does not fit the user\'s site', location: 'role' }]);
  const { rows } = await db.query<UserRow>(
    `UPDATE app_user SET role = $2, active = $3, updated_at = now() WHERE id = $1 RETURNING ${columns}`,
    [userId, role, input.active ?? current.active],
  );
  noteCredentialChange(db);
  await recordAudit(db, { siteId: current.siteId, actor, action: 'user.updated', targetType: 'user', targetId: userId, details: { ...input } });
  return toUser(rows[0]!);
}

export async function countUsers(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM app_user');
  return rows[0]!.n;
}
