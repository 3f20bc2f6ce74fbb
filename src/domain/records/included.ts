import type { Resource } from '@medplum/fhirtypes';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { isResourceId } from './index-values.ts';
import { present } from './read.ts';
import type { StoredResourceType } from './search-parameters.ts';

/**
 * The reads behind _include and _revinclude (https://hl7.org/fhir/R4/search.html#include): the
 * resources of one site that a page's matches refer to, or that refer to them. Both are fixed to
 * the site, so a reference to another site's resource includes nothing.
 */

/** The site's resources of one type with these ids, in no particular order. */
export async function readByIds(db: Queryable, site: SiteContext, type: StoredResourceType, ids: readonly string[]): Promise<Resource[]> {
  const valid = [...new Set(ids.filter(isResourceId))];
  if (valid.length === 0) return [];
  const { rows } = await db.query<{ content: Resource }>(
    'SELECT content FROM clinical_resource WHERE site_id = $1 AND resource_type = $2 AND id = ANY($3::uuid[])',
    [site.siteId, type, valid],
  );
  return rows.map((row) => present(row.content));
}

/**
 * The site's resources of `type` belonging to these patients: the patients in the order given,
 * each one's in creation order, at most `limit` in all. One index range per patient
 * (clinical_resource_patient_idx), so the statement stops as soon as it has `limit` rows.
 */
export async function readOfPatients(db: Queryable, site: SiteContext, type: StoredResourceType, patientIds: readonly string[], limit: number): Promise<Resource[]> {
  const valid = [...new Set(patientIds.filter(isResourceId))];
  if (valid.length === 0 || limit <= 0) return [];
  const { rows } = await db.query<{ content: Resource }>(
    `SELECT r.content
       FROM unnest($2::uuid[]) WITH ORDINALITY AS p(id, position)
       CROSS JOIN LATERAL (
         SELECT c.content, c.seq FROM clinical_resource c
          WHERE c.site_id = $1 AND c.patient_id = p.id AND c.resource_type = $3
          ORDER BY c.seq LIMIT $4) r
      ORDER BY p.position, r.seq
      LIMIT $4`,
    [site.siteId, valid, type, limit],
  );
  return rows.map((row) => present(row.content));
}
