/**
 * Reading the site's imaging reports. A report's patient, study date and description are its
 * study's, read through a same-site join, so a patient merge that moves the study moves the report.
 */
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { isUuid } from '../uuid.ts';
import { studyDateTime } from './study-time.ts';

export type ReportStatus = 'draft' | 'completed';

export interface ImagingReport {
  id: string;
  studyInstanceUid: string;
  patientId: string | null;
  status: ReportStatus;
  text: string;
  authorUserId: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
  /** ISO yyyy-mm-dd. */
  studyDate: string | null;
  /** FHIR dateTime of the study's start when its instant is known, else its date (study-time.ts). */
  studyDateTime: string | null;
  studyDescription: string | null;
  /** Starts at 1, increases with every change: the optimistic-concurrency token. */
  version: number;
}

export interface ReportSearch {
  ids?: string[];
  patientIds?: string[];
  studyInstanceUids?: string[];
  statuses?: ReportStatus[];
  limit: number;
  offset: number;
}

export const maxReportPageSize = 1000;

const reportColumns = `r.id, r.study_instance_uid, s.patient_id, r.status, r.text, r.author_user_id, r.created_at,
  r.updated_at, r.completed_at, s.study_date::text AS study_date, s.study_description, r.version,
  s.study_time::text AS study_time, s.study_started_at`;
const reportFrom = `FROM imaging_report r
  JOIN imaging_study s ON s.site_id = r.site_id AND s.study_instance_uid = r.study_instance_uid`;
export const reportSelect = `SELECT ${reportColumns} ${reportFrom}`;

export async function readReport(db: Queryable, site: SiteContext, id: string): Promise<ImagingReport | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query(`${reportSelect} WHERE r.site_id = $1 AND s.site_id = $1 AND r.id = $2`, [site.siteId, id]);
  return rows[0] ? toReport(rows[0]) : undefined;
}

/**
 * Reports of the site matching every given criterion (each list is "any of"; an empty list
 * matches nothing), newest first. Ids that cannot exist (not UUIDs) simply match nothing.
 */
export async function searchReports(db: Queryable, site: SiteContext, search: ReportSearch): Promise<{ reports: ImagingReport[]; total: number }> {
  const limit = Math.min(Math.max(Math.trunc(search.limit), 0), maxReportPageSize);
  const offset = Math.max(Math.trunc(search.offset), 0);
  const where = ['r.site_id = $1', 's.site_id = $1'];
  const values: unknown[] = [site.siteId];
  const add = (sql: (parameter: string) => string, value: unknown) => {
    values.push(value);
    where.push(sql(`$${values.length}`));
  };
  if (search.ids) add((p) => `r.id = ANY (${p}::uuid[])`, search.ids.filter(isUuid));
  if (search.patientIds) add((p) => `s.patient_id = ANY (${p}::uuid[])`, search.patientIds.filter(isUuid));
  if (search.studyInstanceUids) add((p) => `r.study_instance_uid = ANY (${p}::text[])`, search.studyInstanceUids);
  if (search.statuses) add((p) => `r.status = ANY (${p}::text[])`, search.statuses);
  values.push(limit, offset);
  const { rows } = await db.query(
    `SELECT ${reportColumns}, count(*) OVER () AS full_count ${reportFrom}
     WHERE ${where.join(' AND ')}
     ORDER BY r.created_at DESC, r.id
     LIMIT $${values.length - 1} OFFSET $${values.length}`,
    values,
  );
  // count(*) OVER () on the page is lost when the page is empty; count separately only then.
  let total = rows.length > 0 ? Number(rows[0].full_count) : 0;
  if (rows.length === 0 && (offset > 0 || limit === 0)) {
    const count = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n ${reportFrom}
       WHERE ${where.join(' AND ')}`,
      values.slice(0, -2),
    );
    total = count.rows[0]!.n;
  }
  return { reports: rows.map(toReport), total };
}

export function toReport(row: Record<string, any>): ImagingReport {
  return {
    id: row.id,
    studyInstanceUid: row.study_instance_uid,
    patientId: row.patient_id,
    status: row.status,
    text: row.text,
    authorUserId: row.author_user_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    studyDate: row.study_date,
    studyDateTime: studyDateTime(row.study_date, row.study_time, row.study_started_at),
    studyDescription: row.study_description,
    version: row.version,
  };
}
