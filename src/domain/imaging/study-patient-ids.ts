import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';

/** The site's patients (FHIR Patient ids) the given studies are linked to, for the data access log. */
export async function patientIdsOfStudies(db: Queryable, site: SiteContext, studyInstanceUids: readonly string[]): Promise<string[]> {
  if (studyInstanceUids.length === 0) return [];
  const { rows } = await db.query<{ patient_id: string }>({
    name: 'imaging-study-patient-ids',
    text: 'SELECT DISTINCT patient_id FROM imaging_study WHERE site_id = $1 AND study_instance_uid = ANY($2::text[]) AND patient_id IS NOT NULL',
    values: [site.siteId, studyInstanceUids],
  });
  return rows.map((row) => row.patient_id);
}
