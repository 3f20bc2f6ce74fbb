import { indexInstance } from '../../src/domain/imaging/index-instance.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import type { Database } from '../../src/storage/database.ts';

let studies = 0;

/** An indexed MR study of one instance (no file), belonging to the patient; its Study Instance UID. */
export async function indexedStudyOf(database: Database, site: SiteContext, patientId: string, mrn: string): Promise<string> {
  const studyInstanceUid = `1.2.826.0.1.3680043.9.${process.pid}.${Date.now()}${++studies}`;
  await database.transaction((tx) =>
    indexInstance(tx, site, {
      sopInstanceUid: `${studyInstanceUid}.1.1`,
      sopClassUid: '1.2.840.10008.5.1.4.1.1.4',
      transferSyntaxUid: '1.2.840.10008.1.2.1',
      studyInstanceUid,
      seriesInstanceUid: `${studyInstanceUid}.1`,
      patientId: mrn,
      studyDate: '20260314',
      studyDescription: 'MR knee',
      storagePath: `test/${studyInstanceUid}.dcm`,
      sizeBytes: 10,
      sha256: '0'.repeat(64),
    }),
  );
  await database.query('UPDATE imaging_study SET patient_id = $3 WHERE site_id = $1 AND study_instance_uid = $2 AND patient_id IS NULL', [site.siteId, studyInstanceUid, patientId]);
  return studyInstanceUid;
}
