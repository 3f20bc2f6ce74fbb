/**
 * The site's worklist (issue 5 point 4): indexed studies with their instance and series counts,
 * procedure-step status and report status; paged and filterable. Used by the administration app
 * and the CLI `studies list`.
 *
 * A study may have several procedure steps (one per modality or per performed protocol) and
 * several reports; the worklist shows one status of each, by precedence:
 *   step:   IN PROGRESS if any step is, else COMPLETED if any is, else DISCONTINUED, else none;
 *   report: completed if any report is, else draft if any, else none.
 */
import type { Queryable } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import { parseDicomDate, parseModality } from './dicom-values.ts';
import type { ProcedureStepStatus } from './procedure-step-input.ts';
import type { ReportStatus } from './report-queries.ts';
import { isUuid } from '../uuid.ts';
import { decoratePage, reportStatusCondition, stepStatusCondition, toWorklistStudy, type WorklistStudy } from './worklist-query.ts';

export { getStudy, type SeriesSummary, type StudyDetail } from './study-detail.ts';
export type { WorklistStudy } from './worklist-query.ts';

export interface WorklistFilter {
  /** Study date from (inclusive), ISO yyyy-mm-dd or DICOM yyyymmdd. */
  from?: string;
  /** Study date to (inclusive). */
  to?: string;
  modality?: string;
  /** The linked patient's id or business identifier, the DICOM PatientID, or part of the patient's name. */
  patient?: string;
  stepStatus?: ProcedureStepStatus | 'none';
  reportStatus?: ReportStatus | 'none';
  limit: number;
  offset: number;
}

export const maxWorklistPageSize = 1000;
const stepStatusFilters = ['IN PROGRESS', 'COMPLETED', 'DISCONTINUED', 'none'];
const reportStatusFilters = ['draft', 'completed', 'none'];

const order = 'study_date DESC NULLS LAST, study_time DESC NULLS LAST, last_received_at DESC, study_instance_uid';

export async function listWorklist(db: Queryable, site: SiteContext, filter: WorklistFilter): Promise<{ studies: WorklistStudy[]; total: number }> {
  const limit = Math.min(Math.max(Math.trunc(filter.limit) || 0, 0), maxWorklistPageSize);
  const offset = Math.max(Math.trunc(filter.offset) || 0, 0);
  const where = ['s.site_id = $1'];
  const values: unknown[] = [site.siteId];
  const add = (sql: (parameter: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  const from = filter.from === undefined ? undefined : dateOrThrow(filter.from, 'from');
  const to = filter.to === undefined ? undefined : dateOrThrow(filter.to, 'to');
  if (from && to && from > to) throw invalid('from is after to', 'from');
  if (from) add((p) => `s.study_date >= ${p}::date`, from);
  if (to) add((p) => `s.study_date <= ${p}::date`, to);
  if (filter.modality !== undefined) {
    const modality = parseModality(filter.modality);
    if (!modality) throw invalid('modality must be a DICOM modality code', 'modality');
    add((p) => `s.modalities @> ARRAY[${p}::text]`, modality);
  }
  const patient = filter.patient?.trim();
  if (patient) {
    values.push(patient, `%${patient.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const [exact, pattern] = [`$${values.length - 1}`, `$${values.length}`];
    // The linked patient's current business identifier matches too: after an HL7 merge, a study
    // keeps the PatientID its modality sent, but belongs to the surviving patient.
    where.push(
      `(${isUuid(patient) ? `s.patient_id = ${exact}::uuid OR ` : ''}s.dicom_patient_id = ${exact}::text OR lower(s.patient_name) LIKE ${pattern}
        OR s.patient_id IN (SELECT c.id FROM clinical_resource c WHERE c.site_id = $1 AND c.resource_type = 'Patient' AND c.business_identifier = ${exact}::text))`,
    );
  }
  if (filter.stepStatus !== undefined) {
    if (!stepStatusFilters.includes(filter.stepStatus)) throw invalid('stepStatus must be IN PROGRESS, COMPLETED, DISCONTINUED or none', 'stepStatus');
    where.push(stepStatusCondition[filter.stepStatus]);
  }
  if (filter.reportStatus !== undefined) {
    if (!reportStatusFilters.includes(filter.reportStatus)) throw invalid('reportStatus must be draft, completed or none', 'reportStatus');
    where.push(reportStatusCondition[filter.reportStatus]);
  }
  const conditions = where.join(' AND ');
  const pageValues = [...values, limit, offset];
  const [page, count] = await Promise.all([
    db.query(
      `${decoratePage(`SELECT s.* FROM imaging_study s WHERE ${conditions}
         ORDER BY ${order} LIMIT $${pageValues.length - 1} OFFSET $${pageValues.length}`)}
       ORDER BY ${order}`,
      pageValues,
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM imaging_study s WHERE ${conditions}`, values),
  ]);
  const rows = page.rows;
  const total = count.rows[0]!.n;
  return { studies: rows.map(toWorklistStudy), total };
}

function dateOrThrow(value: string, field: string): string {
  const date = parseDicomDate(value);
  if (!date) throw invalid(`${field} must be a date (yyyy-mm-dd)`, field);
  return date;
}

function invalid(message: string, location: string): DomainError {
  return new DomainError('invalid', message, [{ message, location }]);
}
