import type { Resource } from '@medplum/fhirtypes';
import type { FastifyRequest } from 'fastify';

/**
 * Conditional read (https://hl7.org/fhir/R4/http.html#cread): true when the client's copy is
 * current, so that the answer is 304 Not Modified. RFC 9110 section 13.1.2: If-None-Match uses
 * the weak comparison (W/"3" matches "3"), and "*" matches any current resource. Section 13.1.3:
 * If-Modified-Since is ignored when If-None-Match is present, and an HTTP-date has whole seconds,
 * so lastUpdated is compared truncated to the second.
 */
export function clientCopyIsCurrent(request: FastifyRequest, resource: Resource): boolean {
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const versionId = resource.meta?.versionId ?? '1';
    return ifNoneMatch.split(',').some((tag) => {
      const trimmed = tag.trim();
      return trimmed === '*' || trimmed.replace(/^W\//, '') === `"${versionId}"`;
    });
  }
  const ifModifiedSince = request.headers['if-modified-since'];
  const lastUpdated = resource.meta?.lastUpdated;
  if (ifModifiedSince === undefined || lastUpdated === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  // An invalid date is ignored (RFC 9110 section 13.1.3).
  if (Number.isNaN(since)) return false;
  return Math.floor(Date.parse(lastUpdated) / 1000) * 1000 <= since;
}
