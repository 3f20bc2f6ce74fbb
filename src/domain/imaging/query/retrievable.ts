/**
 * The instances a retrieve names (C-GET, C-MOVE, WADO-RS): by study, series or SOP Instance UIDs
 * of one site. Read in pages by SOP Instance UID, so a study of any size is never held at once.
 */
import type { Queryable } from '../../../storage/database.ts';
import { DomainError } from '../../errors.ts';
import type { SiteContext } from '../../site-context.ts';
import { SqlParameters, uidListCondition } from './matching.ts';

export interface RetrieveSelection {
  /** Backslash-separated UID lists as in a retrieve identifier; at least one must be given. */
  studyInstanceUids?: string;
  seriesInstanceUids?: string;
  sopInstanceUids?: string;
}

/** What sending one stored instance needs. */
export interface RetrievableInstance {
  /** The index row's id: a file stored again under the same name (after a purge) is another row. */
  id: string;
  sopInstanceUid: string;
  sopClassUid: string;
  transferSyntaxUid: string;
  studyInstanceUid: string;
  seriesInstanceUid: string;
  /** Relative to the data directory; the file holds the dataset exactly as received. */
  storagePath: string;
  sizeBytes: number;
}

const pageSize = 500;

/** An imaging_instance row (its retrieval columns) as a RetrievableInstance. */
export function retrievableInstanceOf(row: Record<string, unknown>): RetrievableInstance {
  return {
    id: String(row.id),
    sopInstanceUid: String(row.sop_instance_uid),
    sopClassUid: String(row.sop_class_uid),
    transferSyntaxUid: String(row.transfer_syntax_uid),
    studyInstanceUid: String(row.study_instance_uid),
    seriesInstanceUid: String(row.series_instance_uid),
    storagePath: String(row.storage_path),
    sizeBytes: Number(row.size_bytes),
  };
}

function selectionConditions(selection: RetrieveSelection, params: SqlParameters): string[] {
  const conditions = [
    uidListCondition('study_instance_uid', selection.studyInstanceUids, params, 'StudyInstanceUID'),
    uidListCondition('series_instance_uid', selection.seriesInstanceUids, params, 'SeriesInstanceUID'),
    uidListCondition('sop_instance_uid', selection.sopInstanceUids, params, 'SOPInstanceUID'),
  ].filter((condition): condition is string => condition !== undefined);
  // PS3.4 C.4.2.2.1: a retrieve names its unique keys; without any it would mean the whole site.
  if (conditions.length === 0) throw new DomainError('invalid', 'a retrieve names at least one Study, Series or SOP Instance UID', [{ message: 'no unique key', location: 'StudyInstanceUID' }]);
  return conditions;
}

/** How many instances of the site the selection names. */
export async function countRetrievable(db: Queryable, site: SiteContext, selection: RetrieveSelection): Promise<number> {
  const params = new SqlParameters();
  const siteParam = params.add(site.siteId);
  const conditions = selectionConditions(selection, params);
  const { rows } = await db.query<{ count: number }>({
    text: `SELECT count(*)::int AS count FROM imaging_instance WHERE site_id = ${siteParam} AND ${conditions.join(' AND ')}`,
    values: params.values,
  });
  return rows[0]!.count;
}

/** The selection's instances, a page at a time in SOP Instance UID order. */
export async function* retrievableInstances(db: Queryable, site: SiteContext, selection: RetrieveSelection): AsyncGenerator<RetrievableInstance> {
  let after = '';
  for (;;) {
    const params = new SqlParameters();
    const siteParam = params.add(site.siteId);
    const conditions = selectionConditions(selection, params);
    const { rows } = await db.query({
      text: `SELECT id, sop_instance_uid, sop_class_uid, transfer_syntax_uid, study_instance_uid, series_instance_uid, storage_path, size_bytes
        FROM imaging_instance WHERE site_id = ${siteParam} AND ${conditions.join(' AND ')} AND sop_instance_uid > ${params.add(after)}
        ORDER BY sop_instance_uid LIMIT ${pageSize}`,
      values: params.values,
    });
    for (const row of rows) yield retrievableInstanceOf(row);
    if (rows.length < pageSize) return;
    after = rows[rows.length - 1]!.sop_instance_uid;
  }
}
