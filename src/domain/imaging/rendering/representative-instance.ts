/**
 * The instance that stands for a study or a series in a thumbnail: the middle instance (by
 * Instance Number) of the series, or of the study's first series (by Series Number) that holds
 * images. SOP classes that never carry pixel data (structured reports, RT plans and structures,
 * presentation states, key objects, encapsulated documents, waveforms, raw data) are passed over.
 */
import type { Queryable } from '../../../storage/database.ts';
import type { SiteContext } from '../../site-context.ts';
import { retrievableInstanceOf, type RetrievableInstance } from '../query/retrievable.ts';

/** SOP Class UID prefixes of PS3.4 storage classes without Pixel Data. */
const classesWithoutPixels = [
  '1.2.840.10008.5.1.4.1.1.88.%', // structured reports
  '1.2.840.10008.5.1.4.1.1.11.%', // presentation states
  '1.2.840.10008.5.1.4.1.1.9.%', // waveforms
  '1.2.840.10008.5.1.4.1.1.104.%', // encapsulated PDF, CDA, STL
  '1.2.840.10008.5.1.4.1.1.481.3', // RT structure set
  '1.2.840.10008.5.1.4.1.1.481.4', // RT beams treatment record
  '1.2.840.10008.5.1.4.1.1.481.5', // RT plan
  '1.2.840.10008.5.1.4.1.1.481.8', // RT ion plan
  '1.2.840.10008.5.1.4.1.1.66', // raw data
  '1.2.840.10008.5.1.4.1.1.66.%', // registrations, segmentation surfaces
];

export interface ThumbnailSubject {
  studyInstanceUid: string;
  seriesInstanceUid?: string;
}

export async function representativeInstance(db: Queryable, site: SiteContext, subject: ThumbnailSubject): Promise<RetrievableInstance | undefined> {
  const { rows } = await db.query({
    text: `WITH candidates AS (
        SELECT i.id, i.sop_instance_uid, i.sop_class_uid, i.transfer_syntax_uid, i.study_instance_uid, i.series_instance_uid,
               i.storage_path, i.size_bytes, i.instance_number, s.series_number
          FROM imaging_instance i
          LEFT JOIN imaging_series s ON s.site_id = i.site_id AND s.series_instance_uid = i.series_instance_uid
         WHERE i.site_id = $1 AND i.study_instance_uid = $2 AND ($3::text IS NULL OR i.series_instance_uid = $3)
           AND NOT (i.sop_class_uid LIKE ANY ($4::text[]))
      ), chosen_series AS (
        SELECT series_instance_uid FROM candidates ORDER BY series_number NULLS LAST, series_instance_uid LIMIT 1
      ), ranked AS (
        SELECT c.*, row_number() OVER (ORDER BY instance_number NULLS LAST, sop_instance_uid) AS position, count(*) OVER () AS total
          FROM candidates c WHERE c.series_instance_uid = (SELECT series_instance_uid FROM chosen_series)
      )
      SELECT * FROM ranked WHERE position = (total + 1) / 2`,
    values: [site.siteId, subject.studyInstanceUid, subject.seriesInstanceUid ?? null, classesWithoutPixels],
  });
  return rows[0] ? retrievableInstanceOf(rows[0]) : undefined;
}
