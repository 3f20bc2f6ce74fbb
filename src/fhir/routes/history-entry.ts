import type { BundleEntry, Resource } from '@medplum/fhirtypes';
import { etag } from '../http/resource-response.ts';

/** One version in a history Bundle (http.html#history): the resource and the write that made it. */
export function historyEntry(base: string, version: Resource): BundleEntry {
  const { resourceType: type, id } = version;
  const created = version.meta?.versionId === '1';
  return {
    fullUrl: `${base}/${type}/${id}`,
    resource: version,
    request: { method: created ? 'POST' : 'PUT', url: created ? type : `${type}/${id}` },
    response: {
      status: created ? '201 Created' : '200 OK',
      etag: etag(version.meta?.versionId),
      ...(version.meta?.lastUpdated ? { lastModified: version.meta.lastUpdated } : {}),
    },
  };
}
