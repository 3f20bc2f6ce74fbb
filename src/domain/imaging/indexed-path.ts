import type { Database } from '../../storage/database.ts';
import { isUuid } from '../uuid.ts';
import { cleanText } from './dicom-values.ts';
import { canonicalStoragePath } from './stored-instance-file.ts';

/**
 * Whether the index points at <siteId>/<study>/<series>/<sop>.dcm (site-scoped look-up; either path form).
 * One statement on the index alone: this module is loaded by a node's supervisor for start-up
 * recovery, which must not load the imaging and records domain for it.
 */
export async function isIndexedPath(database: Database, relativePath: string): Promise<boolean> {
  const path = canonicalStoragePath(relativePath);
  const parts = /^([0-9a-f-]{36})\/[0-9.]+\/[0-9.]+\/([0-9.]+)\.dcm$/.exec(path);
  if (!parts) return true;
  const uid = cleanText(parts[2]!, 128);
  if (!isUuid(parts[1]!) || !uid) return false;
  const { rows } = await database.query<{ storage_path: string }>({
    name: 'imaging-instance-indexed-path',
    text: 'SELECT storage_path FROM imaging_instance WHERE site_id = $1 AND sop_instance_uid = $2',
    values: [parts[1]!, uid],
  });
  return rows[0] !== undefined && canonicalStoragePath(rows[0].storage_path) === path;
}
