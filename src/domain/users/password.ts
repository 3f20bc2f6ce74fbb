import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { withHashingSlot } from './hashing-gate.ts';
import { passwordWeakness } from './password-strength.ts';

// scrypt with N=2^15, r=8, p=1 (OWASP's minimum recommendation), 64-byte key. Stored as
// scrypt$N$r$p$salt$key so that parameters can be raised later without breaking old hashes.
const cost = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const keyLength = 64;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return withHashingSlot(
    () =>
      new Promise((resolve, reject) =>
        scryptCallback(password, salt, keylen, options, (error, key) => (error ? reject(error) : resolve(key))),
      ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password.normalize('NFKC'), salt, keyLength, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  // Without a stored hash, still spend the time of a verification so that timing does not tell
  // which accounts exist.
  const parts = (stored ?? '').split('$');
  const valid = parts.length === 6 && parts[0] === 'scrypt';
  const N = valid ? Number(parts[1]) : cost.N;
  const r = valid ? Number(parts[2]) : cost.r;
  const p = valid ? Number(parts[3]) : cost.p;
  const salt = valid ? Buffer.from(parts[4]!, 'base64') : randomBytes(16);
  const expected = valid ? Buffer.from(parts[5]!, 'base64') : randomBytes(keyLength);
  const actual = await scrypt(password.normalize('NFKC'), salt, expected.length, { N, r, p, maxmem: cost.maxmem });
  return valid && actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Why a new password is refused, or undefined when it is acceptable for the account `email`. */
export function validatePasswordStrength(password: string, email: string): string | undefined {
  if (password.length < 12) return 'the password must be at least 12 characters';
  if (password.length > 1024) return 'the password must be at most 1024 characters';
  return passwordWeakness(password, email);
}

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
