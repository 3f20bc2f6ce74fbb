import { STATUS_CODES } from 'node:http';
import type { BundleEntry as FhirBundleEntry, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { etag } from '../http/resource-response.ts';
import { mapError } from '../../platform/http/error-mapping.ts';
import { informationOutcome, renderOperationOutcome } from '../outcome.ts';

/**
 * entry.response of a batch-response or transaction-response (https://hl7.org/fhir/R4/bundle.html,
 * http.html#transaction-response): the status line, location, etag and lastModified a request of
 * its own would have had in its headers, and the body as Prefer: return asks.
 */

export type ReturnPreference = 'representation' | 'minimal' | 'operationoutcome';

export function returnPreference(value: string | undefined): ReturnPreference {
  return value === 'minimal' || value === 'operationoutcome' ? value : 'representation';
}

export function statusLine(code: number): string {
  return `${code} ${STATUS_CODES[code] ?? ''}`.trim();
}

/** A resource written (or found by a conditional create) by an entry. */
export function writtenEntry(base: string, status: number, resource: Resource, preference: ReturnPreference): FhirBundleEntry {
  const versionId = resource.meta?.versionId ?? '1';
  const response: FhirBundleEntry['response'] = {
    status: statusLine(status),
    location: `${resource.resourceType}/${resource.id}/_history/${versionId}`,
    etag: etag(versionId),
    ...(resource.meta?.lastUpdated ? { lastModified: resource.meta.lastUpdated } : {}),
  };
  const fullUrl = `${base}/${resource.resourceType}/${resource.id}`;
  if (preference === 'minimal') return { fullUrl, response };
  if (preference === 'operationoutcome') {
    const outcome = informationOutcome([
      { severity: 'information', code: 'informational', diagnostics: `${resource.resourceType}/${resource.id} version ${versionId} ${status === 201 ? 'stored' : status === 200 ? 'current' : 'answered'}` },
    ]);
    return { fullUrl, response: { ...response, outcome } };
  }
  return { fullUrl, resource, response };
}

/** An entry answered by a request of its own (a batch entry, or a read of a transaction). */
export function answeredEntry(status: number, headers: Record<string, string | string[] | number | undefined>, body: unknown): FhirBundleEntry {
  const header = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const location = header('location') ?? header('content-location');
  const tag = header('etag');
  const modified = header('last-modified');
  const response: FhirBundleEntry['response'] = {
    status: statusLine(status),
    ...(location ? { location } : {}),
    ...(tag ? { etag: tag } : {}),
    ...(modified ? { lastModified: new Date(modified).toISOString() } : {}),
  };
  const resource = body as Resource | undefined;
  if (!resource || typeof resource !== 'object') return { response };
  if (resource.resourceType === 'OperationOutcome') return { response: { ...response, outcome: resource as OperationOutcome } };
  return { resource, response };
}

/** An entry of a batch that failed before it could be sent on its own: its OperationOutcome. */
export function failedEntry(error: unknown, requestId: string, url: string): FhirBundleEntry {
  const mapped = mapError(error);
  if (mapped.unexpected) throw error;
  const rendered = renderOperationOutcome({ statusCode: mapped.statusCode, code: mapped.code, message: mapped.message, requestId, url, ...(mapped.details !== undefined ? { details: mapped.details } : {}) });
  return { response: { status: statusLine(mapped.statusCode), outcome: rendered.body as OperationOutcome } };
}
