/**
 * Moves a site's imaging from one patient to another: the HL7 ADT^A40 merge (MRG-1 into PID-3)
 * calls this inside its transaction so that studies follow the surviving patient (issue 5 point 3).
 * Reports follow too: a report's patient is always its study's patient.
 */
import type { Transaction } from '../../storage/database.ts';
import { DomainError } from '../errors.ts';
import type { SiteContext } from '../site-context.ts';
import { isUuid } from '../uuid.ts';

/** Returns the number of studies moved. */
export async function reassignImagingPatient(
  tx: Transaction,
  site: SiteContext,
  fromPatientId: string,
  toPatientId: string,
): Promise<number> {
  if (!isUuid(fromPatientId) || !isUuid(toPatientId)) {
    throw new DomainError('invalid', 'patient ids must be UUIDs');
  }
  if (fromPatientId.toLowerCase() === toPatientId.toLowerCase()) return 0;
  const result = await tx.query(
    `UPDATE imaging_study SET patient_id = $3, updated_at = now()
     WHERE site_id = $1 AND patient_id = $2`,
    [site.siteId, fromPatientId, toPatientId],
  );
  return result.rowCount ?? 0;
}
