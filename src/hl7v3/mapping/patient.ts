import type { Identifier, Patient } from '@medplum/fhirtypes';
import type { AcknowledgementDetail } from '../ack/acknowledgement.ts';
import { attribute, childNamed, childrenNamed, type XmlElement } from '../xml/element.ts';
import { parseHl7DateTime } from '../../domain/time-zones/hl7-timestamp.ts';
import { addressOf, contactPointOf, humanNameOf, identifierOf } from './datatypes.ts';

export interface MappedPatient {
  patient: Patient;
  problems: AcknowledgementDetail[];
}

/** AdministrativeGender (2.16.840.1.113883.5.1) to FHIR administrative-gender. */
const genders: Record<string, Patient['gender']> = { M: 'male', F: 'female', UN: 'other' };

/**
 * The Patient role of a PRPA_MT201301/201302/201303UV02 registration (IHE ITI-44, section
 * 3.44.4.1.2) to a FHIR Patient, with the same field choices the HL7 v2 path makes for PID:
 * patient/id -> identifier (in document order: the first is the site's business identifier),
 * patientPerson name, telecom, administrativeGenderCode, birthTime, addr, and deceasedTime or
 * deceasedInd (as PID-29/30). `timeZone`: the site's, for a deceasedTime without an offset.
 */
export function mapPatientRole(role: XmlElement, timeZone?: string | null): MappedPatient {
  const problems: AcknowledgementDetail[] = [];
  const identifiers: Identifier[] = [];
  for (const element of childrenNamed(role, 'id')) {
    const result = identifierOf(element);
    if (result.identifier) identifiers.push(result.identifier);
    if (result.problem === 'bad-root') {
      problems.push({ typeCode: 'E', code: 'SYN102', text: `id root "${attribute(element, 'root')}" is not an OID, a UUID or an RUID`, location: element.path });
    }
    if (result.problem === 'no-root') {
      problems.push({
        typeCode: 'W',
        code: 'SYN101',
        text: 'an identifier has no root (assigning authority OID); it was kept without a system and cannot be matched across systems',
        location: element.path,
      });
    }
  }
  if (!identifiers.some((identifier) => identifier.system)) {
    problems.push({ typeCode: 'E', code: 'SYN105', text: 'the patient has no identifier with a root; the patient cannot be resolved', location: `${role.path}/id` });
  }

  // identifier[0] is the site's business identifier: it must be one with a system.
  const firstWithSystem = identifiers.findIndex((identifier) => identifier.system);
  if (firstWithSystem > 0) identifiers.unshift(...identifiers.splice(firstWithSystem, 1));
  const patient: Patient = { resourceType: 'Patient' };
  if (identifiers.length > 0) patient.identifier = identifiers;
  const person = childNamed(role, 'patientPerson');
  if (!person) {
    problems.push({ typeCode: 'E', code: 'SYN100', text: 'the patient has no patientPerson', location: `${role.path}/patientPerson` });
    return { patient, problems };
  }

  const names = childrenNamed(person, 'name').map(humanNameOf).filter((name) => name !== undefined);
  if (names.length > 0) patient.name = names;
  const telecom = childrenNamed(person, 'telecom').map(contactPointOf).filter((contact) => contact !== undefined);
  if (telecom.length > 0) patient.telecom = telecom;
  const addresses = childrenNamed(person, 'addr').map(addressOf).filter((address) => address !== undefined);
  if (addresses.length > 0) patient.address = addresses;

  const genderElement = childNamed(person, 'administrativeGenderCode');
  if (genderElement) {
    const code = attribute(genderElement, 'code');
    if (attribute(genderElement, 'nullFlavor') !== undefined) patient.gender = 'unknown';
    else if (code && genders[code]) patient.gender = genders[code];
    else {
      problems.push({
        typeCode: 'E',
        code: 'SYN103',
        text: `administrativeGenderCode "${code ?? ''}" is not in AdministrativeGender (M, F, UN)`,
        location: genderElement.path,
      });
    }
  }

  const birthElement = childNamed(person, 'birthTime');
  if (birthElement && attribute(birthElement, 'nullFlavor') === undefined) {
    const value = attribute(birthElement, 'value');
    const birthDate = value ? birthDateOf(value) : undefined;
    if (birthDate) patient.birthDate = birthDate;
    else {
      problems.push({ typeCode: 'E', code: 'SYN102', text: `birthTime "${value ?? ''}" is not a valid HL7 v3 timestamp (YYYYMMDD)`, location: birthElement.path });
    }
  }
  problems.push(...mapDeath(person, patient, timeZone));
  return { patient, problems };
}

/**
 * deceasedTime (TS) to deceasedDateTime, else deceasedInd (BL) to deceasedBoolean, as the v2 path
 * maps PID-29 and PID-30; an indicator "false" with a death time is refused, as there.
 */
function mapDeath(person: XmlElement, patient: Patient, timeZone: string | null | undefined): AcknowledgementDetail[] {
  const timeElement = childNamed(person, 'deceasedTime');
  const indElement = childNamed(person, 'deceasedInd');
  const indicator = indElement && attribute(indElement, 'nullFlavor') === undefined ? attribute(indElement, 'value') : undefined;
  const value = timeElement && attribute(timeElement, 'nullFlavor') === undefined ? attribute(timeElement, 'value') : undefined;
  if (value !== undefined) {
    const parsed = parseHl7DateTime(value, timeZone);
    if (!parsed) return [{ typeCode: 'E', code: 'SYN102', text: `deceasedTime "${value}" is not a valid HL7 v3 timestamp`, location: timeElement!.path }];
    if (indicator === 'false') return [{ typeCode: 'E', code: 'SYN113', text: `deceasedInd is false but deceasedTime gives a death time "${value}"`, location: indElement!.path }];
    patient.deceasedDateTime = parsed.dateTime;
    return [];
  }
  if (indicator === 'true' || indicator === 'false') patient.deceasedBoolean = indicator === 'true';
  return [];
}

/**
 * TS (Data Types R1: YYYY[MM[DD[HH[MM[SS[.S]]]]]][+/-ZZZZ]) to a FHIR date at the precision
 * given. A time of birth is dropped: FHIR birthDate is a date.
 */
export function birthDateOf(value: string): string | undefined {
  const match = /^(\d{4})(?:(\d{2})(?:(\d{2})(?:\d{2}(?:\d{2}(?:\d{2}(?:\.\d{1,4})?)?)?)?)?)?(?:[+-]\d{4})?$/.exec(value);
  if (!match) return undefined;
  const [, year, month, day] = match as unknown as [string, string, string | undefined, string | undefined];
  if (month === undefined) return year;
  const m = Number(month);
  if (m < 1 || m > 12) return undefined;
  if (day === undefined) return `${year}-${month}`;
  const d = Number(day);
  const daysInMonth = new Date(Date.UTC(Number(year), m, 0)).getUTCDate();
  if (d < 1 || d > daysInMonth) return undefined;
  return `${year}-${month}-${day}`;
}
