/**
 * One study of the site with everything the administration app shows on its page: the worklist
 * summary, its series with counts, its procedure steps and its reports.
 */
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { cleanText } from './dicom-values.ts';
import { listProcedureSteps, type ProcedureStep } from './procedure-steps.ts';
import { searchReports, type ImagingReport } from './report-queries.ts';
import { readWorklistStudy, type WorklistStudy } from './worklist-query.ts';

export interface SeriesSummary {
  seriesInstanceUid: string;
  modality: string | null;
  seriesNumber: number | null;
  seriesDescription: string | null;
  instanceCount: number;
  sizeBytes: number;
  firstReceivedAt: Date;
}

export interface StudyDetail extends WorklistStudy {
  series: SeriesSummary[];
  procedureSteps: ProcedureStep[];
  reports: ImagingReport[];
}

/** Reports shown with a study; a study with more is not something a reading room produces. */
const maxReportsPerStudy = 200;

export async function getStudy(db: Queryable, site: SiteContext, studyInstanceUid: string): Promise<StudyDetail | undefined> {
  const uid = cleanText(studyInstanceUid, 128);
  if (!uid) return undefined;
  const study = await readWorklistStudy(db, site, uid);
  if (!study) return undefined;
  const [series, procedureSteps, reports] = await Promise.all([
    listSeries(db, site, uid),
    listProcedureSteps(db, site, uid),
    searchReports(db, site, { studyInstanceUids: [uid], limit: maxReportsPerStudy, offset: 0 }),
  ]);
  return { ...study, series, procedureSteps, reports: reports.reports };
}

async function listSeries(db: Queryable, site: SiteContext, studyInstanceUid: string): Promise<SeriesSummary[]> {
  const { rows } = await db.query(
    `SELECT se.series_instance_uid, se.modality, se.series_number, se.series_description, se.first_received_at,
            count(i.sop_instance_uid)::int AS instance_count, COALESCE(sum(i.size_bytes), 0)::text AS size_bytes
     FROM imaging_series se
     LEFT JOIN imaging_instance i ON i.site_id = se.site_id AND i.series_instance_uid = se.series_instance_uid
     WHERE se.site_id = $1 AND se.study_instance_uid = $2
     GROUP BY se.site_id, se.series_instance_uid
     ORDER BY se.series_number NULLS LAST, se.first_received_at, se.series_instance_uid`,
    [site.siteId, studyInstanceUid],
  );
  return rows.map((row) => ({
    seriesInstanceUid: row.series_instance_uid,
    modality: row.modality,
    seriesNumber: row.series_number,
    seriesDescription: row.series_description,
    instanceCount: row.instance_count,
    sizeBytes: Number(row.size_bytes),
    firstReceivedAt: row.first_received_at,
  }));
}
