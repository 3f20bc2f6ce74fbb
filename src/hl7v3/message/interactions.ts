import type { Identifier, Patient } from '@medplum/fhirtypes';
import type { AcknowledgementDetail } from '../ack/acknowledgement.ts';
import { identifierOf } from '../mapping/datatypes.ts';
import { mapPatientRole } from '../mapping/patient.ts';
import { attribute, childNamed, childrenNamed, descend, type XmlElement } from '../xml/element.ts';

/**
 * The interactions of the IHE Patient Identity Feed HL7 V3 transaction (ITI-44, section 3.44.4):
 * what each one asks the patient domain to do.
 */
export const supportedInteractions = {
  PRPA_IN201301UV02: 'Patient Registry Record Added',
  PRPA_IN201302UV02: 'Patient Registry Record Revised',
  PRPA_IN201304UV02: 'Patient Registry Duplicates Resolved',
} as const;

export type SupportedInteraction = keyof typeof supportedInteractions;

export function isSupportedInteraction(name: string): name is SupportedInteraction {
  return Object.hasOwn(supportedInteractions, name);
}

export type PatientCommand =
  | { kind: 'upsert'; interaction: 'PRPA_IN201301UV02' | 'PRPA_IN201302UV02'; patient: Patient }
  /** Each prior (obsolete) identifier is merged into the surviving patient, as ADT^A40 does. */
  | { kind: 'merge'; interaction: 'PRPA_IN201304UV02'; patient: Patient; priorIdentifiers: Identifier[] };

export interface ReadCommand {
  command: PatientCommand | undefined;
  problems: AcknowledgementDetail[];
}

/** Reads controlActProcess/subject/registrationEvent of a supported interaction. */
/** `timeZone`: the site's, for times without an offset (mapping/patient.ts). */
export function readPatientCommand(root: XmlElement, interaction: SupportedInteraction, timeZone?: string | null): ReadCommand {
  const controlAct = childNamed(root, 'controlActProcess');
  const event = descend(controlAct, 'subject', 'registrationEvent');
  const role = descend(event, 'subject1', 'patient');
  if (!role) {
    const missingAt = !controlAct ? `${root.path}/controlActProcess` : `${controlAct.path}/subject/registrationEvent/subject1/patient`;
    return {
      command: undefined,
      problems: [{ typeCode: 'E', code: 'SYN100', text: 'the message has no registrationEvent patient (controlActProcess/subject/registrationEvent/subject1/patient)', location: missingAt }],
    };
  }
  const { patient, problems } = mapPatientRole(role, timeZone);
  if (interaction !== 'PRPA_IN201304UV02') {
    return { command: { kind: 'upsert', interaction, patient }, problems };
  }

  const priorIdentifiers: Identifier[] = [];
  const replacements = childrenNamed(event, 'replacementOf');
  for (const replacement of replacements) {
    const prior = descend(replacement, 'priorRegistration', 'subject1', 'priorRegisteredRole');
    for (const element of childrenNamed(prior, 'id')) {
      const result = identifierOf(element);
      if (result.identifier && !result.problem) {
        if (result.identifier.value === patient.identifier?.[0]?.value) {
          problems.push({ typeCode: 'E', code: 'SYN113', text: `the prior id ${result.identifier.value} is the surviving patient's own id`, location: element.path });
        } else priorIdentifiers.push(result.identifier);
      } else if (result.problem === 'bad-root') {
        problems.push({ typeCode: 'E', code: 'SYN102', text: `prior id root "${attribute(element, 'root')}" is not an OID, a UUID or an RUID`, location: element.path });
      } else if (result.problem !== 'null') {
        problems.push({ typeCode: 'E', code: 'SYN101', text: 'a prior registration id needs a root and an extension', location: element.path });
      }
    }
  }
  if (priorIdentifiers.length === 0 && !problems.some((problem) => problem.typeCode === 'E')) {
    problems.push({
      typeCode: 'E',
      code: 'SYN105',
      text: 'a duplicates-resolved message needs the obsolete patient id (replacementOf/priorRegistration/subject1/priorRegisteredRole/id)',
      location: replacements[0]?.path ?? `${event!.path}/replacementOf`,
    });
  }
  return { command: { kind: 'merge', interaction, patient, priorIdentifiers }, problems };
}
