// @ts-check
/**
 * The DICOMweb origin as the signed-in user: a short-lived, read-only token of the site from the
 * admin API (POST /api/sites/{site}/dicomweb-tokens), renewed a minute before it runs out, sent as
 * Authorization: Bearer. The token lives in this module's memory only (no storage, no cookie).
 */
import { post } from '../api.js';

const renewBeforeMs = 60_000;

/**
 * @typedef {{ url: string; authorization(): Promise<string>; fetch(path: string, accept: string): Promise<Response> }} DicomwebAccess
 */

/** @param {string} siteId @returns {Promise<DicomwebAccess>} */
export async function dicomwebAccess(siteId) {
  /** @type {{ token: string; expiresAt: number; url: string } | null} */
  let current = null;
  /** @type {Promise<{ token: string; expiresAt: number; url: string }> | null} */
  let renewing = null;
  const renew = async () => {
    const issued = await post(`/api/sites/${siteId}/dicomweb-tokens`, {});
    current = { token: issued.token, expiresAt: Date.parse(issued.expires_at), url: issued.dicomweb_url };
    return current;
  };
  const valid = async () => {
    if (current && current.expiresAt - Date.now() > renewBeforeMs) return current;
    renewing ??= renew().finally(() => { renewing = null; });
    return renewing;
  };
  const first = await valid();
  const authorization = async () => `Bearer ${(await valid()).token}`;
  return {
    url: first.url,
    authorization,
    fetch: async (path, accept) => fetch(`${first.url}${path}`, { headers: { authorization: await authorization(), accept }, credentials: 'omit' }),
  };
}
