/**
 * Links a study to the site's patient whose business identifier equals the DICOM PatientID
 * (0010,0020), creating that patient from the DICOM demographics when the site has none
 * (issue 5 point 3). An existing patient is never updated from DICOM: HL7 ADT owns demographics,
 * and a modality's worklist copy of them is the less trustworthy source.
 */
import type { HumanName, Patient } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { ensurePatient } from '../patients/demographics.ts';
import { resourceStore } from '../records/resource-store.ts';
import type { SiteContext } from '../site-context.ts';
import { parsePersonName } from './dicom-values.ts';
import type { NormalizedInstance } from './received-instance.ts';

export async function linkStudyPatient(
  tx: Transaction,
  site: SiteContext,
  studyInstanceUid: string,
  value: NormalizedInstance & { patientId: string },
): Promise<string> {
  const patientId = (await survivorOfMerge(tx, site, value.patientId)) ?? (await ensurePatient(tx, site, patientFromDicom(value))).patientId;
  await tx.query({
    name: 'imaging-study-link-patient',
    text: 'UPDATE imaging_study SET patient_id = $3, updated_at = now() WHERE site_id = $1 AND study_instance_uid = $2 AND patient_id IS NULL',
    values: [site.siteId, studyInstanceUid, patientId],
  });
  return patientId;
}

/**
 * After an HL7 merge (A40) the merged-away patient is inactive and the surviving patient carries
 * its identifier (use "old"). Modalities keep sending the old PatientID for a while (their
 * worklist was built before the merge): those studies belong to the survivor, not to a new
 * patient created under the old identifier.
 */
async function survivorOfMerge(tx: Transaction, site: SiteContext, identifier: string): Promise<string | undefined> {
  const store = resourceStore(tx, site);
  if (await store.findPatientByBusinessIdentifier(identifier)) return undefined;
  const carriers = (await store.findByIdentifier<Patient>('Patient', { value: identifier })).filter((patient) => patient.active !== false);
  // Exactly one active patient carries it; with none or several, the ordinary rule decides.
  return carriers.length === 1 ? carriers[0]!.id : undefined;
}

// PS3.3 C.7.1.1 Patient's Sex to FHIR administrative-gender.
const genders = { M: 'male', F: 'female', O: 'other' } as const;

/** The FHIR Patient a DICOM header describes, mapped like the HL7 v2 PID mapping does. */
export function patientFromDicom(value: NormalizedInstance & { patientId: string }): Patient {
  const patient: Patient = { resourceType: 'Patient', identifier: [{ value: value.patientId }] };
  const name = parsePersonName(value.patientName ?? undefined);
  if (name) {
    const human: HumanName = { use: 'official' };
    if (name.family) human.family = name.family;
    if (name.given.length > 0) human.given = name.given;
    if (name.prefix) human.prefix = [name.prefix];
    if (name.suffix) human.suffix = [name.suffix];
    human.text = [name.prefix, ...name.given, name.family, name.suffix].filter((part) => !!part).join(' ');
    patient.name = [human];
  }
  if (value.patientBirthDate) patient.birthDate = value.patientBirthDate;
  if (value.patientSex) patient.gender = genders[value.patientSex];
  return patient;
}
