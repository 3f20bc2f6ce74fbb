/**
 * What API keys and automation tokens share: a credential reads <kind>_<prefix>_<secret>, the
 * prefix (48 random bits, hex) identifies it in lists and logs and finds its row, the secret
 * (256 random bits) proves possession. Only a SHA-256 of the secret is stored: with that much
 * entropy a slow hash adds nothing (as GitHub's tokens).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export function newCredential(): { prefix: string; secret: string } {
  return { prefix: randomBytes(6).toString('hex'), secret: randomBytes(32).toString('base64url') };
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/**
 * Constant time, and the same work when no row was found (compared against a dummy), so that
 * timing tells neither a wrong secret from an unknown prefix.
 */
export function secretMatches(presentedHash: Buffer, storedHash: Buffer | undefined): boolean {
  const stored = storedHash ?? Buffer.alloc(presentedHash.length);
  return timingSafeEqual(presentedHash, stored) && storedHash !== undefined;
}
