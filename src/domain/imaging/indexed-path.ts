import type { Database } from '../../storage/database.ts';
import { findSiteById, siteContextFor } from '../sites/sites.ts';
import { findInstance } from './index-instance.ts';
import { canonicalStoragePath } from './stored-instance-file.ts';

/** Whether the index points at <siteId>/<study>/<series>/<sop>.dcm (site-scoped look-up; either path form). */
export async function isIndexedPath(database: Database, relativePath: string): Promise<boolean> {
  const path = canonicalStoragePath(relativePath);
  const parts = /^([0-9a-f-]{36})\/[0-9.]+\/[0-9.]+\/([0-9.]+)\.dcm$/.exec(path);
  if (!parts) return true;
  const site = await findSiteById(database, parts[1]!);
  if (!site) return false;
  const instance = await findInstance(database, siteContextFor(site, { kind: 'operator' }), parts[2]!);
  return instance !== undefined && canonicalStoragePath(instance.storagePath) === path;
}
