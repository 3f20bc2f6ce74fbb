/**
 * Where a stored DICOM instance's file is. imaging_instance.storage_path is relative to the DICOM
 * storage folder (CG_DICOM_STORAGE_DIR, shared by every node): <siteId>/<study>/<series>/<sop>.dcm.
 * Rows written before the storage folder could be set hold dicom/<siteId>/..., relative to the
 * data directory whose dicom folder was the storage; a path starting with "dicom/" can only be
 * one of those (a new path starts with a site id), so both resolve here without rewriting rows.
 * Whatever reads a stored file (the DICOM listener, the admin app, the CLI) resolves it here.
 */
import { join } from 'node:path';

const legacyPrefix = 'dicom/';
const uidPattern = /^[0-9]+(\.[0-9]+)*$/;
const siteIdPattern = /^[0-9a-f-]{36}$/;
const canonicalPattern = /^[0-9a-f-]{36}\/[0-9.]+\/[0-9.]+\/[0-9.]+\.dcm$/;

export class NotAStoredInstancePathError extends Error {
  override readonly name = 'NotAStoredInstancePathError';
}

/** The storage_path a new instance is recorded under (UIDs checked: digits and dots, at most 64). */
export function storedInstancePath(siteId: string, studyUid: string, seriesUid: string, sopUid: string): string {
  for (const uid of [studyUid, seriesUid, sopUid]) {
    if (!uidPattern.test(uid) || uid.length > 64) throw new NotAStoredInstancePathError(`not a UID usable as a file name: ${uid}`);
  }
  if (!siteIdPattern.test(siteId)) throw new NotAStoredInstancePathError('not a site id');
  return `${siteId}/${studyUid}/${seriesUid}/${sopUid}.dcm`;
}

/** The path in today's form, for comparing a recorded path with a computed one. */
export function canonicalStoragePath(storagePath: string): string {
  return storagePath.startsWith(legacyPrefix) ? storagePath.slice(legacyPrefix.length) : storagePath;
}

/**
 * The absolute file of a recorded storage_path under the storage folder. Throws for anything that
 * is not a stored instance's path (the index is trusted, but a path must never leave the folder).
 */
export function resolveStoredInstance(storageDir: string, storagePath: string): string {
  const canonical = canonicalStoragePath(storagePath);
  if (!canonicalPattern.test(canonical) || canonical.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new NotAStoredInstancePathError(`not a stored instance path: ${JSON.stringify(storagePath)}`);
  }
  return join(storageDir, ...canonical.split('/'));
}
