/**
 * The session cookie (RFC 6265bis): HttpOnly so scripts cannot read it, SameSite=Strict so the
 * browser never sends it on a request started by another site, Path=/ and no Domain so it stays
 * on the admin origin's host, Secure whenever the origin serves HTTPS.
 */
export const sessionCookieName = 'cg_session';

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index < 0) continue;
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

export function sessionCookie(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${sessionCookieName}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

export function clearedSessionCookie(options: { secure: boolean }): string {
  return sessionCookie('', { secure: options.secure, maxAgeSeconds: 0 });
}
