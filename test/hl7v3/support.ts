import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The shared fixtures sit beside the repository (../shared/fixtures). */
export const v3FixtureDir = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'hl7v3', 'ipf');

export function v3Fixture(name: string): Buffer {
  return readFileSync(join(v3FixtureDir, name));
}

/** A minimal PRPA_IN201301UV02 with the given patient content. */
export function minimalAdd(patientContent: string, person = '<name><given>A</given><family>B</family></name>'): string {
  return `<PRPA_IN201301UV02 xmlns="urn:hl7-org:v3" ITSVersion="XML_1.0">
  <id root="1.2.3.4" extension="m1"/><interactionId root="2.16.840.1.113883.1.6" extension="PRPA_IN201301UV02"/>
  <controlActProcess classCode="CACT" moodCode="EVN"><subject typeCode="SUBJ"><registrationEvent classCode="REG" moodCode="EVN">
  <subject1 typeCode="SBJ"><patient classCode="PAT">${patientContent}<patientPerson>${person}</patientPerson></patient></subject1>
  </registrationEvent></subject></controlActProcess></PRPA_IN201301UV02>`;
}
