import type { Queryable } from '../../storage/database.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import type { Actor } from '../site-context.ts';
import { deleteExport } from './export-jobs.ts';

/**
 * An administrator cancels an export (or deletes a finished one), audited; the admin app and the
 * CLI alike. The caller removes the job's files once this has committed.
 */
export async function cancelExport(db: Queryable, siteId: string, exportId: string, actor: Actor): Promise<void> {
  if (!(await deleteExport(db, siteId, exportId))) throw new DomainError('not-found', `no export "${exportId}" in this site`);
  await recordAudit(db, { siteId, actor, action: 'bulk-export.cancelled', targetType: 'bulk-export', targetId: exportId });
}
