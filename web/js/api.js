// @ts-check
/**
 * The admin origin's JSON API. The session lives in an HttpOnly cookie the script never sees;
 * the CSRF token from the session answer goes in X-CSRF-Token on every state-changing request.
 */

/** @type {string | null} */
let csrfToken = null;
/** @type {() => void} */
let onSessionEnded = () => {};
/** @type {() => void} */
let onActivity = () => {};

export class ApiError extends Error {
  /** @param {number} status @param {any} body */
  constructor(status, body) {
    super(body?.error?.message ?? `the request failed (HTTP ${status})`);
    this.status = status;
    /** @type {string} */
    this.code = body?.error?.code ?? 'error';
    /** @type {{ field: string; message: string }[]} */
    this.fields = body?.error?.fields ?? [];
    /** @type {string | undefined} */
    this.requestId = body?.error?.request_id;
  }
}

/** @param {string | null} token */
export function setCsrfToken(token) {
  csrfToken = token;
}

/** @param {() => void} handler */
export function whenSessionEnds(handler) {
  onSessionEnded = handler;
}

/** Every answered request counts as activity: the server restarts its idle limit on each. @param {() => void} handler */
export function whenActive(handler) {
  onActivity = handler;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response;
  try {
    response = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch {
    throw new ApiError(0, { error: { code: 'network', message: 'The service cannot be reached. Check the connection and try again.' } });
  }
  if (response.status !== 401) onActivity();
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401 && path !== '/api/session') onSessionEnded();
    throw new ApiError(response.status, data);
  }
  return data;
}

export const get = (/** @type {string} */ path) => api('GET', path);
export const post = (/** @type {string} */ path, /** @type {unknown} */ body) => api('POST', path, body ?? {});
export const patch = (/** @type {string} */ path, /** @type {unknown} */ body) => api('PATCH', path, body);
export const put = (/** @type {string} */ path, /** @type {unknown} */ body) => api('PUT', path, body);
export const del = (/** @type {string} */ path) => api('DELETE', path);

/** @param {Record<string, string | number | undefined | null>} params */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
