/**
 * PID to FHIR Patient, after the HL7 v2-to-FHIR IG's "PID[Patient]" segment map:
 * PID-3 identifiers (CX), PID-5 names (XPN), PID-7 birth date, PID-8 gender (table 0001),
 * PID-11 addresses (XAD), PID-13 home and PID-14 work telecom (XTN), PID-29/30 death.
 * https://build.fhir.org/ig/HL7/v2-to-fhir/ConceptMap-segment-pid-to-patient.html
 */
import type { Address, ContactPoint, HumanName, Identifier, Patient } from '@medplum/fhirtypes';
import { componentOf, fieldOf, hl7Null, isEmptyRepetition, valueOf, type Repetition, type Segment } from '../er7/message.ts';
import { errorCodes, error, warning, type Problem } from '../problems.ts';
import { parseHl7DateTime } from '../../domain/time-zones/hl7-timestamp.ts';

export interface MappedPatient {
  patient: Patient;
  /** Elements whose field was the HL7 null "" (section 2.5.3: delete the receiver's value). */
  cleared: DemographicElement[];
  problems: Problem[];
}

export type DemographicElement = 'name' | 'birthDate' | 'gender' | 'address' | 'telecom' | 'deceased';

const nullableFields: [number, DemographicElement][] = [
  [5, 'name'],
  [7, 'birthDate'],
  [8, 'gender'],
  [11, 'address'],
];

const identifierTypeSystem = 'http://terminology.hl7.org/CodeSystem/v2-0203';

/** `timeZone`: the IANA zone of the sender's times without an offset (PID-29; datetime.ts). */
export function mapPid(pid: Segment, timeZone?: string | null): MappedPatient {
  const problems: Problem[] = [];
  const at = (field: number, component?: number) => ({ segment: 'PID', sequence: pid.sequence, field, ...(component ? { component } : {}) });
  const patient: Patient = { resourceType: 'Patient' };

  const identifiers = identifierList(fieldOf(pid, 3));
  if (identifiers.length === 0) {
    problems.push(error(errorCodes.requiredFieldMissing, 'PID-3 (patient identifier list) has no identifier; the patient cannot be resolved', at(3, 1)));
  } else patient.identifier = identifiers;

  const names = fieldOf(pid, 5).filter((rep) => !isEmptyRepetition(rep)).map(nameFromXpn).filter((n): n is HumanName => n !== undefined);
  if (names.length > 0) patient.name = names;

  const birth = valueOf(pid, 7).trim();
  if (birth !== '' && birth !== hl7Null) {
    const parsed = parseHl7DateTime(birth);
    if (parsed) patient.birthDate = parsed.date;
    else problems.push(error(errorCodes.dataTypeError, `PID-7 (birth date) "${birth}" is not a date (YYYYMMDD)`, at(7, 1)));
  }

  const sex = valueOf(pid, 8).trim().toUpperCase();
  if (sex !== '' && sex !== hl7Null) {
    const gender = genders[sex];
    if (gender) patient.gender = gender;
    else {
      patient.gender = 'unknown';
      problems.push(warning(errorCodes.tableValueNotFound, `PID-8 (administrative sex) "${sex}" is not in table 0001; stored as unknown`, at(8)));
    }
  }

  const addresses = fieldOf(pid, 11).filter((rep) => !isEmptyRepetition(rep)).map(addressFromXad).filter((a): a is Address => a !== undefined);
  if (addresses.length > 0) patient.address = addresses;

  const telecom = [
    ...fieldOf(pid, 13).map((rep) => contactFromXtn(rep, 'home')),
    ...fieldOf(pid, 14).map((rep) => contactFromXtn(rep, 'work')),
  ].filter((c): c is ContactPoint => c !== undefined);
  if (telecom.length > 0) patient.telecom = telecom;

  problems.push(...mapDeath(pid, patient, timeZone));

  const isNull = (field: number) => {
    const reps = fieldOf(pid, field);
    return reps.length === 1 && reps[0]!.length === 1 && reps[0]![0]!.length === 1 && reps[0]![0]![0] === hl7Null;
  };
  const cleared = nullableFields.filter(([field]) => isNull(field)).map(([, element]) => element);
  // Telecom is one element fed by two fields: cleared only when both say "".
  if (isNull(13) && isNull(14)) cleared.push('telecom');
  // Death is one element fed by two fields, likewise ("" in both: the death was recorded in error).
  if (isNull(29) && isNull(30)) cleared.push('deceased');
  return { patient, cleared, problems };
}

/**
 * PID-29 (patient death date and time) to deceasedDateTime, else PID-30 (death indicator, table
 * 0136) to deceasedBoolean, as the IG maps them. A death notice comes as an ADT^A08 (or A03) with
 * these fields; an indicator "N" with a death time contradicts itself, and which one is wrong
 * cannot be told, so the message is refused rather than a patient recorded alive or dead.
 */
function mapDeath(pid: Segment, patient: Patient, timeZone: string | null | undefined): Problem[] {
  const at = (field: number) => ({ segment: 'PID', sequence: pid.sequence, field });
  const time = valueOf(pid, 29).trim();
  const indicator = valueOf(pid, 30).trim().toUpperCase();
  const problems: Problem[] = [];
  if (time !== '' && time !== hl7Null) {
    const parsed = parseHl7DateTime(time, timeZone);
    if (!parsed) problems.push(error(errorCodes.dataTypeError, `PID-29 (patient death date and time) "${time}" is not a date/time`, at(29)));
    else if (indicator === 'N') problems.push(error(errorCodes.dataTypeError, `PID-30 (patient death indicator) is "N" but PID-29 gives a death time "${time}"`, at(30)));
    else patient.deceasedDateTime = parsed.dateTime;
    return problems;
  }
  if (indicator === 'Y') patient.deceasedBoolean = true;
  else if (indicator === 'N') patient.deceasedBoolean = false;
  else if (indicator !== '' && indicator !== hl7Null) problems.push(warning(errorCodes.tableValueNotFound, `PID-30 (patient death indicator) "${indicator}" is not in table 0136 (Y, N); ignored`, at(30)));
  return problems;
}

// Table 0001 to FHIR administrative-gender, per the IG's ConceptMap "table-hl70001-to-administrative-gender".
const genders: Record<string, Patient['gender']> = { F: 'female', M: 'male', O: 'other', U: 'unknown', A: 'other', N: 'unknown' };

/**
 * A CX list (PID-3, MRG-1) as FHIR identifiers, the site's business identifier first: the first
 * repetition of type MR, else the first. HL7 null ("") repetitions are skipped.
 */
export function identifierList(field: Repetition[]): Identifier[] {
  const identifiers = field
    .filter((rep) => !isEmptyRepetition(rep) && componentOf(rep, 1).trim() !== '' && componentOf(rep, 1) !== hl7Null)
    .map(identifierFromCx);
  const mr = identifiers.findIndex((id) => id.type?.coding?.[0]?.code === 'MR');
  if (mr > 0) identifiers.unshift(identifiers.splice(mr, 1)[0]!);
  return identifiers;
}

function identifierFromCx(rep: Repetition): Identifier {
  const identifier: Identifier = { value: componentOf(rep, 1).trim() };
  const namespace = componentOf(rep, 4, 1).trim();
  const universal = componentOf(rep, 4, 2).trim();
  const universalType = componentOf(rep, 4, 3).trim().toUpperCase();
  const system = authoritySystem(namespace, universal, universalType);
  if (system) identifier.system = system;
  else if (namespace !== '') identifier.assigner = { display: namespace };
  const type = componentOf(rep, 5).trim();
  if (type !== '') identifier.type = { coding: [{ system: identifierTypeSystem, code: type }] };
  return identifier;
}

/** CX.4 (HD) to a system URI: an ISO OID, a UUID, a URI, or a namespace that is already a URI. */
export function authoritySystem(namespace: string, universal: string, universalType: string): string | undefined {
  if (universal !== '') {
    if (universalType === 'ISO' || /^\d+(\.\d+)+$/.test(universal)) return `urn:oid:${universal}`;
    if (universalType === 'UUID') return `urn:uuid:${universal.toLowerCase()}`;
    if (universalType === 'URI' || /^[a-z][a-z0-9+.-]*:/i.test(universal)) return universal;
  }
  if (/^(https?|urn):/i.test(namespace)) return namespace;
  if (/^\d+(\.\d+)+$/.test(namespace)) return `urn:oid:${namespace}`;
  return undefined;
}

// Table 0200 name type to FHIR name-use.
const nameUses: Record<string, HumanName['use']> = { L: 'official', D: 'usual', M: 'maiden', N: 'nickname', A: 'usual', B: 'official', C: 'old', S: 'anonymous', U: 'temp' };

function nameFromXpn(rep: Repetition): HumanName | undefined {
  const clean = (v: string) => (v === hl7Null ? '' : v.trim());
  const family = clean(componentOf(rep, 1, 1));
  const given = [clean(componentOf(rep, 2)), ...clean(componentOf(rep, 3)).split(/\s+/)].filter((g) => g !== '');
  const suffix = [clean(componentOf(rep, 4)), clean(componentOf(rep, 6))].filter((s) => s !== '');
  const prefix = clean(componentOf(rep, 5));
  if (family === '' && given.length === 0) return undefined;
  const name: HumanName = {};
  const use = nameUses[clean(componentOf(rep, 7)).toUpperCase()];
  if (use) name.use = use;
  if (family !== '') name.family = family;
  if (given.length > 0) name.given = given;
  if (prefix !== '') name.prefix = [prefix];
  if (suffix.length > 0) name.suffix = suffix;
  name.text = [prefix, ...given, family, ...suffix].filter((p) => p !== '').join(' ');
  return name;
}

// Table 0190 address type to FHIR address-use.
const addressUses: Record<string, Address['use']> = { H: 'home', B: 'work', O: 'work', C: 'temp', BA: 'old', BDL: 'old' };

function addressFromXad(rep: Repetition): Address | undefined {
  const clean = (v: string) => (v === hl7Null ? '' : v.trim());
  const line = [clean(componentOf(rep, 1, 1)), clean(componentOf(rep, 2))].filter((l) => l !== '');
  const city = clean(componentOf(rep, 3));
  const state = clean(componentOf(rep, 4));
  const postalCode = clean(componentOf(rep, 5));
  const country = clean(componentOf(rep, 6));
  if (line.length === 0 && !city && !state && !postalCode && !country) return undefined;
  const address: Address = {};
  const use = addressUses[clean(componentOf(rep, 7)).toUpperCase()];
  if (use) address.use = use;
  if (line.length > 0) address.line = line;
  if (city) address.city = city;
  if (state) address.state = state;
  if (postalCode) address.postalCode = postalCode;
  if (country) address.country = country;
  address.text = [line.join(', '), city, [state, postalCode].filter(Boolean).join(' '), country].filter((p) => p !== '').join(', ');
  return address;
}

/**
 * XTN (section 2.A.89): an e-mail when XTN.3 is "Internet" or XTN.2 is "NET" (address in XTN.4);
 * otherwise a number built from XTN.5-8 (country, area, local, extension), else the deprecated
 * XTN.1. Equipment type FX is a fax, BP a pager, CP a mobile phone.
 */
export function contactFromXtn(rep: Repetition, use: 'home' | 'work'): ContactPoint | undefined {
  const clean = (v: string) => (v === hl7Null ? '' : v.trim());
  const useCode = clean(componentOf(rep, 2)).toUpperCase();
  const equipment = clean(componentOf(rep, 3)).toUpperCase();
  const email = clean(componentOf(rep, 4));
  if (equipment === 'INTERNET' || equipment === 'X.400' || useCode === 'NET' || (email !== '' && clean(componentOf(rep, 7)) === '')) {
    const value = email || clean(componentOf(rep, 1));
    return value ? { system: 'email', value, use } : undefined;
  }
  const [country, area, local, extension] = [5, 6, 7, 8].map((n) => clean(componentOf(rep, n)));
  let value = '';
  if (local) {
    value = `${country ? `+${country.replace(/^\+/, '')} ` : ''}${area ? `(${area}) ` : ''}${local}${extension ? ` ext. ${extension}` : ''}`;
  } else value = clean(componentOf(rep, 1));
  if (value === '') return undefined;
  const system: ContactPoint['system'] = equipment === 'FX' ? 'fax' : equipment === 'BP' ? 'pager' : 'phone';
  return { system, value, use: equipment === 'CP' ? 'mobile' : use };
}
