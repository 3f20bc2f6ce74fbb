import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import { entryElement } from '../bundle/entry-element.ts';
import { informationOutcome } from '../outcome.ts';

/** A searchset Bundle (https://hl7.org/fhir/R4/bundle.html, search.html#return). */
export function searchsetBundle(options: {
  base: string;
  resources: Resource[];
  /** _include and _revinclude results: search mode include. */
  included?: Resource[];
  /** Said in the outcome entry as warnings, with the ignored parameters. */
  warnings?: string[];
  total?: number;
  selfUrl: string;
  nextUrl?: string;
  ignored: { name: string; reason: string }[];
}): Bundle {
  const entryOf = (mode: 'match' | 'include') => (resource: Resource): BundleEntry => ({
    fullUrl: `${options.base}/${resource.resourceType}/${resource.id}`,
    resource,
    search: { mode },
  });
  const entry: BundleEntry[] = [...options.resources.map(entryOf('match')), ...(options.included ?? []).map(entryOf('include'))];
  const warnings = options.warnings ?? [];
  if (options.ignored.length > 0 || warnings.length > 0) {
    entry.push({
      resource: informationOutcome([
        ...options.ignored.map((ignored) => ({ severity: 'warning' as const, code: 'not-supported' as const, diagnostics: `${ignored.reason}; it was ignored` })),
        ...warnings.map((diagnostics) => ({ severity: 'warning' as const, code: 'too-costly' as const, diagnostics })),
      ]),
      search: { mode: 'outcome' },
    });
  }
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    ...(options.total !== undefined ? { total: options.total } : {}),
    link: [{ relation: 'self', url: options.selfUrl }, ...(options.nextUrl ? [{ relation: 'next', url: options.nextUrl }] : [])],
    ...entryElement(entry),
  };
}

/** `?a=b&…`, or nothing when there are no pairs. */
export function queryString(pairs: [string, string][]): string {
  const text = new URLSearchParams(pairs).toString();
  return text === '' ? '' : `?${text}`;
}
