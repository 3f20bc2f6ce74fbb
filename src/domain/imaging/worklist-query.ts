/**
 * The worklist's study query: a site's studies with their derived procedure-step and report
 * statuses (precedence documented in worklist.ts) and, for a page, their counts.
 */
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { displayPersonName } from './dicom-values.ts';
import type { ProcedureStepStatus } from './procedure-step-input.ts';
import type { ReportStatus } from './report-queries.ts';

export interface WorklistStudy {
  studyInstanceUid: string;
  patientId: string | null;
  dicomPatientId: string | null;
  /** As received (DICOM PN, e.g. Doe^Jane). */
  patientName: string | null;
  /** "Family, Given" for display. */
  patientDisplayName: string | null;
  patientBirthDate: string | null;
  patientSex: 'M' | 'F' | 'O' | null;
  studyDate: string | null;
  /** hh:mm:ss[.ffffff] */
  studyTime: string | null;
  /** StudyDate and StudyTime as an instant, when a zone applied (study-time.ts). */
  studyStartedAt: Date | null;
  accessionNumber: string | null;
  studyDescription: string | null;
  modalities: string[];
  seriesCount: number;
  instanceCount: number;
  sizeBytes: number;
  stepStatus: ProcedureStepStatus | null;
  reportStatus: ReportStatus | null;
  firstReceivedAt: Date;
  lastReceivedAt: Date;
}

/**
 * Decorates a page of imaging_study rows (the inner query selects s.* of one site) with the
 * derived statuses and the counts. Computed for the page only, never for the whole site: a
 * worklist of 50 rows costs 50 index probes per aspect whatever the size of the site.
 */
export function decoratePage(inner: string): string {
  return `SELECT page.*, step.status AS step_status, rep.status AS report_status,
      c.series_count, c.instance_count, c.size_bytes
    FROM (${inner}) page
    LEFT JOIN LATERAL (
      SELECT CASE WHEN bool_or(p.status = 'IN PROGRESS') THEN 'IN PROGRESS'
                  WHEN bool_or(p.status = 'COMPLETED') THEN 'COMPLETED'
                  WHEN bool_or(p.status = 'DISCONTINUED') THEN 'DISCONTINUED' END AS status
      FROM imaging_procedure_step p WHERE p.site_id = page.site_id AND p.study_instance_uid = page.study_instance_uid
    ) step ON true
    LEFT JOIN LATERAL (
      SELECT CASE WHEN bool_or(r.status = 'completed') THEN 'completed'
                  WHEN bool_or(r.status = 'draft') THEN 'draft' END AS status
      FROM imaging_report r WHERE r.site_id = page.site_id AND r.study_instance_uid = page.study_instance_uid
    ) rep ON true
    LEFT JOIN LATERAL (
      SELECT count(DISTINCT i.series_instance_uid)::int AS series_count, count(*)::int AS instance_count,
             COALESCE(sum(i.size_bytes), 0)::text AS size_bytes
      FROM imaging_instance i WHERE i.site_id = page.site_id AND i.study_instance_uid = page.study_instance_uid
    ) c ON true`;
}

const hasStep = (statuses: string) =>
  `EXISTS (SELECT 1 FROM imaging_procedure_step p WHERE p.site_id = s.site_id AND p.study_instance_uid = s.study_instance_uid AND p.status IN (${statuses}))`;
const hasReport = (statuses: string) =>
  `EXISTS (SELECT 1 FROM imaging_report r WHERE r.site_id = s.site_id AND r.study_instance_uid = s.study_instance_uid AND r.status IN (${statuses}))`;

/**
 * WHERE conditions on imaging_study s selecting studies whose derived step status is `status`,
 * following the precedence IN PROGRESS > COMPLETED > DISCONTINUED > none. Written as semi-joins
 * so the planner can drive them from the step side instead of deriving every study's status.
 */
export const stepStatusCondition = {
  'IN PROGRESS': hasStep(`'IN PROGRESS'`),
  COMPLETED: `${hasStep(`'COMPLETED'`)} AND NOT ${hasStep(`'IN PROGRESS'`)}`,
  DISCONTINUED: `${hasStep(`'DISCONTINUED'`)} AND NOT ${hasStep(`'IN PROGRESS', 'COMPLETED'`)}`,
  none: `NOT ${hasStep(`'IN PROGRESS', 'COMPLETED', 'DISCONTINUED'`)}`,
} as const;

/** Same for the report status: completed > draft > none. */
export const reportStatusCondition = {
  completed: hasReport(`'completed'`),
  draft: `${hasReport(`'draft'`)} AND NOT ${hasReport(`'completed'`)}`,
  none: `NOT ${hasReport(`'draft', 'completed'`)}`,
} as const;

/** One study of the site with its counts and statuses, or undefined. */
export async function readWorklistStudy(db: Queryable, site: SiteContext, studyInstanceUid: string): Promise<WorklistStudy | undefined> {
  const { rows } = await db.query(decoratePage('SELECT s.* FROM imaging_study s WHERE s.site_id = $1 AND s.study_instance_uid = $2'), [
    site.siteId,
    studyInstanceUid,
  ]);
  return rows[0] ? toWorklistStudy(rows[0]) : undefined;
}

export function toWorklistStudy(row: Record<string, any>): WorklistStudy {
  return {
    studyInstanceUid: row.study_instance_uid,
    patientId: row.patient_id,
    dicomPatientId: row.dicom_patient_id,
    patientName: row.patient_name,
    patientDisplayName: displayPersonName(row.patient_name ?? undefined) ?? null,
    patientBirthDate: isoDate(row.patient_birth_date),
    patientSex: row.patient_sex,
    studyDate: isoDate(row.study_date),
    studyTime: row.study_time,
    studyStartedAt: row.study_started_at ?? null,
    accessionNumber: row.accession_number,
    studyDescription: row.study_description,
    modalities: row.modalities,
    seriesCount: row.series_count ?? 0,
    instanceCount: row.instance_count ?? 0,
    sizeBytes: Number(row.size_bytes ?? 0),
    stepStatus: row.step_status,
    reportStatus: row.report_status,
    firstReceivedAt: row.first_received_at,
    lastReceivedAt: row.last_received_at,
  };
}

/** pg returns date columns as local-midnight Date objects; the domain speaks ISO dates. */
function isoDate(value: Date | string | null): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${String(value.getFullYear()).padStart(4, '0')}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
}
