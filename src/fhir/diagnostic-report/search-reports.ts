import type { Resource } from '@medplum/fhirtypes';
import { maxReportPageSize, searchReports, type ImagingReport, type ReportSearch, type ReportStatus } from '../../domain/imaging/reports.ts';
import type { SearchCondition } from '../../domain/records/resource-store.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Queryable } from '../../storage/database.ts';
import { diagnosticReportOf } from '../../domain/imaging/diagnostic-report-view.ts';

/**
 * DiagnosticReport search over the imaging reports (DESIGN.md section 1): patient selects the
 * reports whose study belongs to the patient; status=final selects completed reports and any
 * other value drafts. Repeated parameters AND (their value lists intersect).
 */
/**
 * The report list is newest first and paged by offset, so a report added (or leaving the match
 * set) between two pages shifts the rest. The next page therefore reads a window around the
 * previous offset and continues after the last report it showed, wherever that moved (up to
 * `slack` places); only if that report is gone does it fall back to the plain offset.
 */
const slack = 50;

export interface ReportPage {
  resources: Resource[];
  total: number;
  /** Where the next page starts, when there is one. */
  next?: { offset: number; afterId: string };
}

export async function searchDiagnosticReports(
  db: Queryable,
  site: SiteContext,
  conditions: SearchCondition[],
  page: { count: number; offset: number; afterId?: string },
): Promise<ReportPage> {
  const query = reportQuery(conditions, page.count, page.offset);
  let start = page.offset;
  let reports: ImagingReport[];
  let total: number;
  if (page.afterId !== undefined && page.count > 0) {
    const windowStart = Math.max(0, page.offset - slack);
    const window = await searchReports(db, site, { ...query, offset: windowStart, limit: Math.min(page.count + 2 * slack, maxReportPageSize) });
    const index = window.reports.findIndex((report) => report.id === page.afterId);
    total = window.total;
    if (index >= 0) {
      start = windowStart + index + 1;
      reports = window.reports.slice(index + 1, index + 1 + page.count);
      if (reports.length < page.count && start + reports.length < total) {
        reports = (await searchReports(db, site, { ...query, offset: start, limit: page.count })).reports;
      }
    } else {
      ({ reports, total } = await searchReports(db, site, query));
    }
  } else {
    ({ reports, total } = await searchReports(db, site, query));
  }
  const last = reports[reports.length - 1];
  const result: ReportPage = { resources: reports.map(diagnosticReportOf), total };
  if (page.count > 0 && last && start + reports.length < total) result.next = { offset: start + reports.length, afterId: last.id };
  return result;
}

function reportQuery(conditions: SearchCondition[], count: number, offset: number): ReportSearch {
  const query: ReportSearch = { limit: count, offset };
  for (const condition of conditions) {
    if (condition.kind === 'id') query.ids = intersect(query.ids, condition.ids);
    if (condition.kind === 'patient') query.patientIds = intersect(query.patientIds, condition.ids);
    if (condition.kind === 'token' && condition.param === 'status') {
      const statuses = condition.values.map((value): ReportStatus => (value.code === 'final' ? 'completed' : 'draft'));
      query.statuses = intersect(query.statuses, statuses);
    }
  }
  return query;
}

function intersect<T>(current: T[] | undefined, next: T[]): T[] {
  return current === undefined ? [...new Set(next)] : current.filter((value) => next.includes(value));
}
