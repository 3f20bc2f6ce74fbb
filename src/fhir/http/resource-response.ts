import type { Resource } from '@medplum/fhirtypes';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fhirJson } from '../outcome.ts';
import { clientCopyIsCurrent } from './conditional-read.ts';

/** The service base of this origin as the client addressed it ({scheme}://{host}/fhir). */
export function baseUrl(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}/fhir`;
}

/** Weak ETag of a version (https://hl7.org/fhir/R4/http.html#versioning). */
export function etag(versionId: string | undefined): string {
  return `W/"${versionId ?? '1'}"`;
}

/** If-Match: W/"3" or "3" (http.html#concurrency), or * (any version); undefined when absent. */
export function ifMatchVersion(request: FastifyRequest): string | undefined | null {
  return versionOfETag(request.headers['if-match']);
}

/**
 * The version an If-Match value names; null when it is no ETag. `*` (RFC 9110 section 13.1.1:
 * true for any current representation) is returned as it is: no version id contains it.
 */
export function versionOfETag(value: string | undefined): string | undefined | null {
  if (value === undefined) return undefined;
  if (value.trim() === '*') return '*';
  const match = /^\s*(?:W\/)?"([^"]+)"\s*$/.exec(value);
  return match ? match[1]! : null;
}

export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type(fhirJson).send(JSON.stringify(body, null, wantsPretty(reply.request) ? 2 : undefined));
}

/** _pretty=true (http.html#parameters): indented JSON. Checked by substring first: most requests have none. */
function wantsPretty(request: FastifyRequest): boolean {
  return request.url.includes('_pretty=') && new URLSearchParams(request.url.split('?')[1] ?? '').get('_pretty') === 'true';
}

export function versionHeaders(reply: FastifyReply, resource: Resource): void {
  reply.header('etag', etag(resource.meta?.versionId));
  if (resource.meta?.lastUpdated) reply.header('last-modified', new Date(resource.meta.lastUpdated).toUTCString());
}

/** A resource with its version headers. */
export function sendResource(reply: FastifyReply, status: number, resource: Resource): FastifyReply {
  versionHeaders(reply, resource);
  return sendJson(reply, status, resource);
}

/**
 * A read's answer: 304 without a body when the client's copy is current (conditional-read.ts),
 * else the resource. The 304 carries the ETag and Last-Modified a 200 would (RFC 9110 section 15.4.5).
 */
export function sendReadResource(reply: FastifyReply, resource: Resource): FastifyReply {
  if (!clientCopyIsCurrent(reply.request, resource)) return sendResource(reply, 200, resource);
  versionHeaders(reply, resource);
  return reply.code(304).send();
}

export function versionLocation(request: FastifyRequest, resource: Resource): string {
  return `${baseUrl(request)}/${resource.resourceType}/${resource.id}/_history/${resource.meta?.versionId ?? '1'}`;
}
