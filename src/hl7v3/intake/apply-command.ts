import type { HumanName, Patient } from '@medplum/fhirtypes';
import { mergePatients, upsertPatientDemographics } from '../../domain/patients/index.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Transaction } from '../../storage/database.ts';
import type { AcknowledgementDetail } from '../ack/acknowledgement.ts';
import type { PatientCommand } from '../message/interactions.ts';

/**
 * Applies a validated patient command through the patient domain, in the caller's transaction.
 * Add and revise are one upsert by business identifier (identifier[0]); duplicates resolved is
 * the ADT^A40 merge, once per prior id. Returns warnings for the acknowledgement.
 */
export async function applyPatientCommand(tx: Transaction, site: SiteContext, command: PatientCommand): Promise<AcknowledgementDetail[]> {
  if (command.kind === 'upsert') {
    await upsertPatientDemographics(tx, site, command.patient);
    return [];
  }
  const warnings: AcknowledgementDetail[] = [];
  const target = withoutPlaceholderNames(command.patient);
  for (const prior of command.priorIdentifiers) {
    const result = await mergePatients(tx, site, { sourceIdentifier: prior.value!, target });
    if (!result.sourceFound) {
      warnings.push({
        typeCode: 'W',
        code: '204',
        text: `no patient of this site has the prior id ${prior.value}; the surviving patient was registered or updated, nothing was merged`,
      });
    }
  }
  return warnings;
}

/**
 * PRPA_IN201304UV02 requires a patientPerson name, and senders fill it with a placeholder
 * (`<name>Unknown</name>` in IHE's own samples). A merge must not overwrite the surviving
 * patient's real name with it, so names given only as free text are left out of a merge.
 */
function withoutPlaceholderNames(patient: Patient): Patient {
  const structured = (patient.name ?? []).filter((name: HumanName) => name.family || name.given?.length);
  const { name: _name, ...rest } = patient;
  return structured.length > 0 ? { ...rest, name: structured } : rest;
}
