import { join, resolve } from 'node:path';
import { count, size } from './limits.ts';

/** FHIR Bulk Data export (docs/fhir.md#bulk-data-export). */
export interface BulkExportSettings {
  /** Where export files are written; every node must see the same folder (like DICOM storage). */
  dir: string;
  /** Hours a finished export and its files are kept before the clean-up deletes them. */
  retentionHours: number;
  /** Export jobs of one site queued or running at once; a kick-off past it is a 429. */
  jobsPerSite: number;
  /** Bytes past which an output file is closed and the type continues in a new file. */
  fileMaxBytes: number;
  /** Seconds a worker's claim on a job lasts without a heartbeat before another takes it over. */
  leaseSeconds: number;
}

export function loadBulkExportSettings(env: NodeJS.ProcessEnv, dataDir: string): BulkExportSettings {
  return {
    dir: resolve(env.CG_EXPORT_DIR?.trim() || join(dataDir, 'exports')),
    retentionHours: count(env, 'CG_EXPORT_RETENTION_HOURS', 24),
    jobsPerSite: count(env, 'CG_EXPORT_JOBS_PER_SITE', 2),
    fileMaxBytes: size(env, 'CG_EXPORT_FILE_MAX_SIZE', 256 * 2 ** 20),
    leaseSeconds: count(env, 'CG_EXPORT_LEASE_SECONDS', 30),
  };
}
