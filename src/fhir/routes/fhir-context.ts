import type { FastifyRequest } from 'fastify';
import { resourceStore, type ResourceStore } from '../../domain/records/resource-store.ts';
import { describeActor, type SiteContext } from '../../domain/site-context.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { siteContextOf } from '../../platform/http/site-context.ts';
import { KeyedLimit } from '../../platform/keyed-limit.ts';
import type { Services } from '../../platform/services.ts';
import type { Queryable } from '../../storage/database.ts';
import { loadPagingSecret } from '../search/paging-secret.ts';
import { createTransactionScopes, type TransactionScopes } from './transaction-scope.ts';

/** What every FHIR route needs: the services, the caller's site and store, the paging key. */
export interface FhirContext {
  services: Services;
  pagingSecret(): Promise<Buffer>;
  /** Searches running per API key in this process (issue 26 point 2). */
  searches: KeyedLimit;
  /** Reads of a transaction Bundle running in its database transaction (transaction-scope.ts). */
  transactionScopes: TransactionScopes;
}

export function createFhirContext(services: Services): FhirContext {
  let secret: Promise<Buffer> | undefined;
  return {
    services,
    searches: new KeyedLimit(Number.MAX_SAFE_INTEGER, services.config.limits.search.perKeyConcurrency),
    transactionScopes: createTransactionScopes(),
    pagingSecret() {
      secret ??= loadPagingSecret(services.database).catch((error: unknown) => {
        secret = undefined; // a database outage must not poison the cache
        throw error;
      });
      return secret;
    },
  };
}

/**
 * Runs a search's statements under every search bound (docs/security.md): at most
 * perKeyConcurrency at once per API key (429 past it), on the search pool, in one read-only
 * transaction with the statement timeout; a read of a transaction Bundle, in that transaction
 * under the same timeout.
 */
export async function boundedSearch<T>(context: FhirContext, site: SiteContext, work: (db: Queryable) => Promise<T>): Promise<T> {
  const limits = context.services.config.limits.search;
  const caller = describeActor(site.actor);
  if (!context.searches.acquire(caller)) {
    throw new HttpProblem(429, 'throttled', `this API key already has ${limits.perKeyConcurrency} searches running; wait for one to finish`, {
      headers: { 'retry-after': '1' },
    });
  }
  try {
    const scope = context.transactionScopes.getStore();
    if (scope) return await work(scope.tx);
    return await context.services.database.search(limits, work);
  } finally {
    context.searches.release(caller);
  }
}

export function siteOf(request: FastifyRequest): SiteContext {
  return siteContextOf(request);
}

/** Where a route's statements go: the pool, or the transaction of the Bundle whose read this is. */
export function databaseFor(context: FhirContext): Queryable {
  return context.transactionScopes.getStore()?.tx ?? context.services.database;
}

export function storeFor(context: FhirContext, request: FastifyRequest): ResourceStore {
  return resourceStore(databaseFor(context), siteContextOf(request));
}

/** Prefer: handling=strict (search.html#errors) and return=… (http.html#ops). */
export function preference(request: FastifyRequest, name: 'handling' | 'return'): string | undefined {
  const header = request.headers.prefer;
  const values = Array.isArray(header) ? header.join(',') : (header ?? '');
  for (const part of values.split(/[,;]/)) {
    const [key, value] = part.split('=').map((piece) => piece.trim().toLowerCase());
    if (key === name && value) return value.replace(/^"|"$/g, '');
  }
  return undefined;
}

/** The query string of the request as ordered pairs (repeats kept: they AND). */
export function queryPairs(request: FastifyRequest): [string, string][] {
  return formPairs(request.url.split('?', 2)[1] ?? '', 'the query string');
}

/**
 * application/x-www-form-urlencoded pairs, refusing what URLSearchParams would quietly repair:
 * a "%" that starts no percent-encoded byte is kept as text, and bytes that are not UTF-8 become
 * U+FFFD, so the server would search for something the client never sent (RFC 3986 section 2.1).
 */
export function formPairs(text: string, what: string): [string, string][] {
  if (text.includes('%')) {
    try {
      decodeURIComponent(text);
    } catch {
      throw new HttpProblem(400, 'invalid', `${what} is not valid percent-encoding: "%" must start a byte such as %2F, and the bytes must be UTF-8 (RFC 3986 section 2.1)`);
    }
  }
  return [...new URLSearchParams(text).entries()];
}
