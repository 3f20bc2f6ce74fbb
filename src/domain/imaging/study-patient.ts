/**
 * Links a study to the site's patient whose business identifier equals the DICOM PatientID
 * (0010,0020), creating that patient from the DICOM demographics when the site has none
 * (issue 5 point 3). An existing patient is never updated from DICOM: HL7 ADT owns demographics,
 * and a modality's worklist copy of them is the less trustworthy source.
 */
import type { HumanName, Patient } from '@medplum/fhirtypes';
import type { Transaction } from '../../storage/database.ts';
import { ensurePatient } from '../patients/demographics.ts';
import type { SiteContext } from '../site-context.ts';
import { parsePersonName } from './dicom-values.ts';
import type { NormalizedInstance } from './received-instance.ts';

export async function linkStudyPatient(
  tx: Transaction,
  site: SiteContext,
  studyInstanceUid: string,
  value: NormalizedInstance & { patientId: string },
): Promise<string> {
  const { patientId } = await ensurePatient(tx, site, patientFromDicom(value));
  await tx.query({
    name: 'imaging-study-link-patient',
    text: 'UPDATE imaging_study SET patient_id = $3, updated_at = now() WHERE site_id = $1 AND study_instance_uid = $2 AND patient_id IS NULL',
    values: [site.siteId, studyInstanceUid, patientId],
  });
  return patientId;
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
