import type { Resource } from '@medplum/fhirtypes';
import { searchReports, type ReportSearch, type ReportStatus } from '../../domain/imaging/reports.ts';
import type { SearchCondition } from '../../domain/records/resource-store.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Queryable } from '../../storage/database.ts';
import { diagnosticReportOf } from './report-view.ts';

/**
 * DiagnosticReport search over the imaging reports (DESIGN.md section 1): patient selects the
 * reports whose study belongs to the patient; status=final selects completed reports and any
 * other value drafts. Repeated parameters AND (their value lists intersect).
 */
export async function searchDiagnosticReports(
  db: Queryable,
  site: SiteContext,
  conditions: SearchCondition[],
  page: { count: number; offset: number },
): Promise<{ resources: Resource[]; total: number }> {
  const query: ReportSearch = { limit: page.count, offset: page.offset };
  for (const condition of conditions) {
    if (condition.kind === 'id') query.ids = intersect(query.ids, condition.ids);
    if (condition.kind === 'patient') query.patientIds = intersect(query.patientIds, condition.ids);
    if (condition.kind === 'token' && condition.param === 'status') {
      const statuses = condition.values.map((value): ReportStatus => (value.code === 'final' ? 'completed' : 'draft'));
      query.statuses = intersect(query.statuses, statuses);
    }
  }
  const { reports, total } = await searchReports(db, site, query);
  return { resources: reports.map(diagnosticReportOf), total };
}

function intersect<T>(current: T[] | undefined, next: T[]): T[] {
  return current === undefined ? [...new Set(next)] : current.filter((value) => next.includes(value));
}
