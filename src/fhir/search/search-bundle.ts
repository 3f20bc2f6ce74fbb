import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import { informationOutcome } from '../outcome.ts';

/** A searchset Bundle (https://hl7.org/fhir/R4/bundle.html, search.html#return). */
export function searchsetBundle(options: {
  base: string;
  resources: Resource[];
  total?: number;
  selfUrl: string;
  nextUrl?: string;
  ignored: { name: string; reason: string }[];
}): Bundle {
  const entry: BundleEntry[] = options.resources.map((resource) => ({
    fullUrl: `${options.base}/${resource.resourceType}/${resource.id}`,
    resource,
    search: { mode: 'match' },
  }));
  if (options.ignored.length > 0) {
    entry.push({
      resource: informationOutcome(
        options.ignored.map((ignored) => ({ severity: 'warning', code: 'not-supported', diagnostics: `${ignored.reason}; it was ignored` })),
      ),
      search: { mode: 'outcome' },
    });
  }
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    ...(options.total !== undefined ? { total: options.total } : {}),
    link: [{ relation: 'self', url: options.selfUrl }, ...(options.nextUrl ? [{ relation: 'next', url: options.nextUrl }] : [])],
    entry,
  };
}

/** `?a=b&…`, or nothing when there are no pairs. */
export function queryString(pairs: [string, string][]): string {
  const text = new URLSearchParams(pairs).toString();
  return text === '' ? '' : `?${text}`;
}
