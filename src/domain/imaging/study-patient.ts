/**
 * Links a study to the site's patient whose business identifier equals the DICOM PatientID
 * (0010,0020), creating that patient from the DICOM demographics when the site has none
 * (issue 5 point 3). A study without a PatientID stays unlinked.
 */
import type { Transaction } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import type { NormalizedInstance } from './received-instance.ts';

export async function linkStudyPatient(
  _tx: Transaction,
  _site: SiteContext,
  _studyInstanceUid: string,
  _value: NormalizedInstance & { patientId: string },
): Promise<string | null> {
  // The site's patient registry (src/domain/patients) is not available yet: the study keeps its
  // DICOM PatientID and demographics, and is linked once the registry exists.
  return null;
}
