import type { Resource } from '@medplum/fhirtypes';
import { maxReportPageSize, searchReports } from '../../domain/imaging/reports.ts';
import { readByIds, readOfPatients } from '../../domain/records/included.ts';
import { isStoredResourceType, patientReferenceElement } from '../../domain/records/search-parameters.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Queryable } from '../../storage/database.ts';
import type { IncludeTarget } from '../capability/resource-definitions.ts';
import { diagnosticReportOf } from '../../domain/imaging/diagnostic-report-view.ts';
import { maxIncludedPerPage } from './search-limits.ts';

/**
 * _include and _revinclude (https://hl7.org/fhir/R4/search.html#include) for one page: the
 * resources its matches refer to through the named reference parameters, and those referring to
 * them. Included resources belong to the page of their matches, so a resource referred to from
 * two pages appears on both; within a page each appears once, and never again if it is a match.
 * Every read runs on the search's connection and is fixed to the key's site.
 */
export interface IncludedPage {
  resources: Resource[];
  /** More resources were referred to than `maxIncludedPerPage`; the first ones are given. */
  truncated: boolean;
}

/** The element of a source type that holds the reference its `patient` parameter searches. */
function referenceElement(sourceType: string): string | undefined {
  if (isStoredResourceType(sourceType)) return patientReferenceElement(sourceType);
  return sourceType === 'DiagnosticReport' ? 'subject' : undefined;
}

/** The id of a relative reference `Type/{id}` in `element` of the resource, when it points to `targetType`. */
function referredId(resource: Resource, element: string, targetType: string): string | undefined {
  const reference = (resource as unknown as Record<string, { reference?: unknown } | undefined>)[element]?.reference;
  if (typeof reference !== 'string' || !reference.startsWith(`${targetType}/`)) return undefined;
  return reference.slice(targetType.length + 1).split('/')[0];
}

export async function includedResources(
  db: Queryable,
  site: SiteContext,
  matches: readonly Resource[],
  include: readonly IncludeTarget[],
  revinclude: readonly IncludeTarget[],
): Promise<IncludedPage> {
  const seen = new Set(matches.map((resource) => `${resource.resourceType}/${resource.id}`));
  const resources: Resource[] = [];
  let truncated = false;
  const add = (found: readonly Resource[]) => {
    for (const resource of found) {
      const key = `${resource.resourceType}/${resource.id}`;
      if (seen.has(key)) continue;
      if (resources.length >= maxIncludedPerPage) {
        truncated = true;
        return;
      }
      seen.add(key);
      resources.push(resource);
    }
  };
  // One more than still fits, so that an overflow is seen.
  const room = () => maxIncludedPerPage - resources.length + 1;
  if (matches.length === 0) return { resources, truncated };

  for (const target of include) {
    const element = referenceElement(target.sourceType);
    if (element === undefined || !isStoredResourceType(target.targetType)) continue;
    const ids = matches.flatMap((resource) => referredId(resource, element, target.targetType) ?? []);
    const found = await readByIds(db, site, target.targetType, ids);
    // In the order the matches refer to them.
    const first = new Map<string, number>();
    ids.forEach((id, index) => first.has(id) || first.set(id, index));
    add(found.sort((a, b) => first.get(a.id!)! - first.get(b.id!)!));
  }
  for (const target of revinclude) {
    if (truncated) break;
    const ids = matches.filter((resource) => resource.resourceType === target.targetType).map((resource) => resource.id!);
    if (isStoredResourceType(target.sourceType)) {
      add(await readOfPatients(db, site, target.sourceType, ids, room()));
    } else if (target.sourceType === 'DiagnosticReport') {
      const limit = Math.min(room(), maxReportPageSize);
      const { reports, total } = await searchReports(db, site, { patientIds: ids, limit, offset: 0 });
      add(reports.map(diagnosticReportOf));
      if (total > reports.length) truncated = true;
    }
  }
  return { resources, truncated };
}
