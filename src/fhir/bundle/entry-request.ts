import type { BundleEntry as FhirBundleEntry } from '@medplum/fhirtypes';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { BundleEntry } from './bundle-entries.ts';
import { answeredEntry } from './entry-response.ts';

/** Headers of the Bundle's request that every entry's request carries too. */
const inherited = ['x-api-key', 'prefer', 'host', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'];

/**
 * Runs one entry as the request it describes, through the same route a request of its own takes
 * (authentication with the same key, the site's confinement, per-key search limits, paging, the
 * data-access audit), in this process without a socket, and answers it as an entry.
 */
export async function sendEntry(app: FastifyInstance, outer: FastifyRequest, entry: BundleEntry): Promise<FhirBundleEntry> {
  const headers: Record<string, string> = { accept: 'application/fhir+json', 'accept-encoding': 'identity' };
  for (const name of inherited) {
    const value = outer.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (entry.ifNoneExist !== undefined) headers['if-none-exist'] = entry.ifNoneExist;
  if (entry.ifMatch !== undefined) headers['if-match'] = entry.ifMatch;
  if (entry.ifNoneMatch !== undefined) headers['if-none-match'] = entry.ifNoneMatch;
  if (entry.ifModifiedSince !== undefined) headers['if-modified-since'] = entry.ifModifiedSince;
  if (entry.resource !== undefined) headers['content-type'] = 'application/fhir+json';
  const response = await app.inject({
    method: entry.method,
    url: `/fhir/${entry.url}`,
    headers,
    remoteAddress: outer.ip,
    ...(entry.resource !== undefined ? { payload: JSON.stringify(entry.resource) } : {}),
  });
  let body: unknown;
  if (response.body !== '' && String(response.headers['content-type'] ?? '').includes('json')) body = JSON.parse(response.body);
  return answeredEntry(response.statusCode, response.headers, body);
}
