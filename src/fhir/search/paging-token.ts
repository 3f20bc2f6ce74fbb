import { createHmac, timingSafeEqual } from 'node:crypto';
import type { VersionCursor } from '../../domain/records/history.ts';
import type { SearchPosition } from '../../domain/records/resource-store.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';

/**
 * The `_page` token of next links: the search's criteria and where the last page ended, signed
 * with HMAC-SHA256 over the site id as well, so a token works only for the site that made it and
 * cannot be edited to reach other rows (search.html#paging leaves the form to the server).
 */

export interface PageState {
  type: string;
  criteria: [string, string][];
  control: [string, string][];
  /** Keyset position of the record store, the offset of the report view, or the last version of a history. */
  position: SearchPosition & { offset?: number; afterId?: string; version?: VersionCursor };
}

const maxTokenLength = 16_384;

function sign(secret: Buffer, siteId: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(siteId).update('\u0000').update(payload).digest();
}

export function encodePageToken(secret: Buffer, siteId: string, state: PageState): string {
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  return `${payload}.${sign(secret, siteId, payload).toString('base64url')}`;
}

export function decodePageToken(secret: Buffer, siteId: string, type: string, token: string): PageState {
  const invalid = new HttpProblem(400, 'invalid', '_page is not a paging token of this search for this site');
  if (token.length > maxTokenLength) throw invalid;
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) throw invalid;
  const expected = sign(secret, siteId, payload);
  const given = Buffer.from(signature, 'base64url');
  // Constant-time comparison: the signature must not be guessable byte by byte.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  let state: PageState;
  try {
    state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as PageState;
  } catch {
    throw invalid;
  }
  if (state.type !== type) throw invalid;
  return state;
}
