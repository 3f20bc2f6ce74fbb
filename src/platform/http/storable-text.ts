import type { FastifyInstance } from 'fastify';
import { HttpProblem } from './http-problem.ts';

/**
 * PostgreSQL text and jsonb hold neither NUL nor a UTF-16 surrogate without its pair (JSON allows
 * both as \u escapes, RFC 8259 section 8.2), so such input would fail in the database as a 500.
 * Every body, query and path value is checked before the route runs and refused as a validation
 * error in the origin's own format (issue 26 point 7).
 */
const unstorable = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export interface UnstorableText {
  /** Object keys and array indexes from the top of the value to the offending text. */
  path: (string | number)[];
  reason: string;
}

/** Deeper values are left to each origin's own nesting limit (FHIR refuses more than 64 levels). */
const maxDepth = 128;

export function findUnstorableText(value: unknown, path: (string | number)[] = []): UnstorableText | undefined {
  if (path.length > maxDepth) return undefined;
  if (typeof value === 'string') {
    const match = unstorable.exec(value);
    if (!match) return undefined;
    return { path, reason: match[0] === '\u0000' ? 'contains a NUL character' : 'contains an unpaired UTF-16 surrogate (not a Unicode character)' };
  }
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findUnstorableText(value[index], [...path, index]);
      if (found) return found;
    }
    return undefined;
  }
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [key, item] of Object.entries(value)) {
      if (unstorable.test(key)) return { path: [...path, key], reason: 'has a name that contains a NUL character or an unpaired surrogate' };
      const found = findUnstorableText(item, [...path, key]);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Refuses requests whose parsed body, query or path parameters hold unstorable text. `location`
 * names the place in the origin's terms (a FHIRPath, a form field); the problem's details carry
 * it as an issue, which each origin's renderer already shows.
 */
export function refuseUnstorableText(app: FastifyInstance, location: (part: 'body' | 'query' | 'params', path: (string | number)[], body: unknown) => string): void {
  app.addHook('preValidation', async (request) => {
    for (const part of ['params', 'query', 'body'] as const) {
      const found = findUnstorableText(request[part], []);
      if (!found) continue;
      const where = location(part, found.path, request.body);
      const message = `${where || 'the request'} ${found.reason}`;
      throw new HttpProblem(400, 'invalid', message, { details: { issues: [{ message, ...(where ? { location: where } : {}) }] } });
    }
  });
}
