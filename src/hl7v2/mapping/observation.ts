/**
 * OBX (with its OBR) to FHIR Observation, after the HL7 v2-to-FHIR IG's "OBX[Observation]" map:
 * OBX-3 code, OBX-5 value by OBX-2 type, OBX-6 units, OBX-7 reference range, OBX-8
 * interpretation, OBX-11 status, OBX-14 (else OBR-7) effective time, category laboratory.
 * https://build.fhir.org/ig/HL7/v2-to-fhir/ConceptMap-segment-obx-to-observation.html
 *
 * The Observation's identifier is the result's identity (result-identity.ts: the order, OBX-3
 * and OBX-4), so a re-sent or corrected result (OBX-11 C) finds and updates the same Observation.
 */
import type { Identifier, Observation, ObservationReferenceRange, Quantity } from '@medplum/fhirtypes';
import { componentOf, fieldOf, hl7Null, isEmptyRepetition, valueOf, type Repetition, type Segment } from '../er7/message.ts';
import { errorCodes, error, warning, type Problem } from '../problems.ts';
import { codeableConcept, systemUri } from './coding.ts';
import { parseHl7DateTime, type LocalTimeSetting } from '../../domain/time-zones/hl7-timestamp.ts';
import { readObservationIdentifier } from './observation-identifier.ts';
import { resultIdentity, type ResultContext } from './result-identity.ts';
import { resultStatusCode } from './result-status.ts';

export interface MappedObservation {
  observation?: Observation;
  /** Identities the service gave this result before (see IncomingResult in the domain). */
  formerIdentifiers: Identifier[];
  problems: Problem[];
  /** True when a time of the result (OBX-14, OBR-7, a DTM value) had no offset and was read as UTC. */
  assumedUtc?: boolean;
}

// Table 0085 to FHIR observation-status, per the IG's ConceptMap "table-hl70085".
const statuses: Record<string, Observation['status']> = {
  C: 'corrected',
  D: 'entered-in-error',
  F: 'final',
  I: 'registered',
  N: 'cancelled',
  O: 'registered',
  P: 'preliminary',
  R: 'preliminary',
  S: 'preliminary',
  U: 'final',
  W: 'entered-in-error',
  X: 'cancelled',
};

const textTypes = new Set(['ST', 'TX', 'FT']);
const codedTypes = new Set(['CE', 'CWE', 'CNE', 'CF']);

export function mapObx(obx: Segment, context: ResultContext & LocalTimeSetting): MappedObservation {
  const problems: Problem[] = [];
  const at = (field: number, component?: number) => ({ segment: 'OBX', sequence: obx.sequence, field, ...(component ? { component } : {}) });
  const clean = (v: string) => (v === hl7Null ? '' : v.trim());

  const read = readObservationIdentifier(obx);
  problems.push(...read.problems);

  const statusCode = resultStatusCode(obx, context.obr);
  problems.push(...statusCode.problems);
  const status = statuses[statusCode.code];
  if (statusCode.code !== '' && !status) problems.push(error(errorCodes.tableValueNotFound, `OBX-11 "${statusCode.code}" is not in table 0085`, at(11)));

  const observation: Observation = {
    resourceType: 'Observation',
    status: status ?? 'unknown',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory', display: 'Laboratory' }] }],
    code: read.identifier?.concept ?? { text: 'unknown' },
  };
  const identity = read.identifier ? resultIdentity(obx, context, read.identifier) : undefined;
  if (identity) observation.identifier = [identity.identifier];

  const times = { assumedUtc: false };
  problems.push(...mapValue(obx, observation, at, context.timeZone, times));

  const range = referenceRange(clean(valueOf(obx, 7)), units(fieldOf(obx, 6)[0]));
  if (range) observation.referenceRange = [range];

  const interpretations = fieldOf(obx, 8)
    .filter((rep) => clean(componentOf(rep, 1)) !== '')
    .map((rep) => ({
      coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', code: clean(componentOf(rep, 1)) }],
      ...(clean(componentOf(rep, 2)) ? { text: clean(componentOf(rep, 2)) } : {}),
    }));
  if (interpretations.length > 0) observation.interpretation = interpretations;

  const effective = clean(valueOf(obx, 14)) || clean(valueOf(context.obr, 7));
  if (effective) {
    const parsed = parseHl7DateTime(effective, context.timeZone);
    if (parsed) {
      observation.effectiveDateTime = parsed.dateTime;
      times.assumedUtc ||= parsed.assumedUtc;
    } else problems.push(error(errorCodes.dataTypeError, `${clean(valueOf(obx, 14)) ? 'OBX-14' : 'OBR-7'} "${effective}" is not a date/time`, clean(valueOf(obx, 14)) ? at(14) : { segment: 'OBR', sequence: context.obr?.sequence ?? 1, field: 7 }));
  }

  const hasErrors = problems.some((p) => p.severity === 'E');
  return hasErrors || !identity ? { formerIdentifiers: [], problems } : { observation, formerIdentifiers: identity.formerIdentifiers, problems, assumedUtc: times.assumedUtc };
}

type At = (field: number, component?: number) => { segment: string; sequence: number; field: number; component?: number };

/** `times.assumedUtc` is set when a DTM value had no offset and was read as UTC (warned like OBX-14). */
function mapValue(obx: Segment, observation: Observation, at: At, timeZone: string | null | undefined, times: { assumedUtc: boolean }): Problem[] {
  const type = valueOf(obx, 2).trim().toUpperCase();
  const repetitions = fieldOf(obx, 5).filter((rep) => !isEmptyRepetition(rep));
  if (repetitions.length === 0) return [];
  if (type === '') return [error(errorCodes.requiredFieldMissing, 'OBX-2 (value type) is empty but OBX-5 has a value', at(2))];
  if (textTypes.has(type)) {
    observation.valueString = repetitions.map((rep) => rep.map((c) => c.join('&')).join('^')).join('\n');
    return [];
  }
  if (repetitions.length > 1) {
    return [error(errorCodes.dataTypeError, `OBX-5 repeats ${repetitions.length} times for value type ${type}; an Observation holds one value, so none was stored`, at(5))];
  }
  const rep = repetitions[0]!;
  const first = componentOf(rep, 1).trim();
  switch (type) {
    case 'NM': {
      const value = parseNumber(first);
      if (value !== undefined) {
        observation.valueQuantity = { value, ...units(fieldOf(obx, 6)[0]) };
        return [];
      }
      const bounded = boundedNumber(first);
      if (!bounded) return [error(errorCodes.dataTypeError, `OBX-5 "${first}" is not a number (value type NM)`, at(5))];
      observation.valueQuantity = { value: bounded.value, comparator: bounded.comparator, ...units(fieldOf(obx, 6)[0]) };
      return [warning(errorCodes.dataTypeError, `OBX-5 "${first}" is a number with a comparator, which value type NM does not allow (SN does); stored as ${bounded.comparator} ${bounded.value}`, at(5))];
    }
    case 'SN':
      return structuredNumeric(rep, fieldOf(obx, 6)[0], observation, at);
    case 'DT':
    case 'DTM':
    case 'TS': {
      const parsed = parseHl7DateTime(first, timeZone);
      if (!parsed) return [error(errorCodes.dataTypeError, `OBX-5 "${first}" is not a date/time (value type ${type})`, at(5))];
      observation.valueDateTime = parsed.dateTime;
      times.assumedUtc ||= parsed.assumedUtc;
      return [];
    }
    case 'TM': {
      const match = /^(\d{2})(\d{2})?(\d{2})?/.exec(first);
      if (!match) return [error(errorCodes.dataTypeError, `OBX-5 "${first}" is not a time (value type TM)`, at(5))];
      observation.valueTime = `${match[1]}:${match[2] ?? '00'}:${match[3] ?? '00'}`;
      return [];
    }
  }
  if (codedTypes.has(type)) {
    const concept = codeableConcept(rep);
    if (concept) observation.valueCodeableConcept = concept;
    return [];
  }
  if (type === 'ID' || type === 'IS') {
    // A code of an HL7 (ID) or user-defined (IS) table, its table unnamed: a coding without a
    // system, as the IG's ID[CodeableConcept] and IS[CodeableConcept] maps make it.
    observation.valueCodeableConcept = { coding: [{ code: first }] };
    return [];
  }
  return [error(errorCodes.dataTypeError, `OBX-2 value type ${type} cannot be mapped to an Observation value (supported: NM, SN, ST, TX, FT, CE, CWE, CNE, ID, IS, DT, DTM, TS, TM)`, at(2))];
}

/**
 * "<0.5", ">500", "<= 10": a result beyond the analyser's range, which many laboratories send as
 * NM although HL7 gives it SN (section 2.A.73). Its meaning is not in doubt, and a FHIR Quantity
 * carries it exactly (its comparator); refusing it would hold the whole result back.
 */
function boundedNumber(text: string): { comparator: NonNullable<Quantity['comparator']>; value: number } | undefined {
  const match = /^(<=|>=|<|>)\s*(\S+)$/.exec(text);
  const value = match ? parseNumber(match[2]!) : undefined;
  return value === undefined ? undefined : { comparator: match![1] as NonNullable<Quantity['comparator']>, value };
}

function parseNumber(text: string): number | undefined {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(text)) return undefined;
  return Number(text);
}

function units(rep: Repetition | undefined): Omit<Quantity, 'value'> {
  if (!rep) return {};
  // The HL7 null "" says there is no unit (a dimensionless result, or a sender that writes "" in
  // every empty field); it is no unit code.
  const clean = (v: string) => (v.trim() === hl7Null ? '' : v.trim());
  const code = clean(componentOf(rep, 1));
  const text = clean(componentOf(rep, 2));
  const system = systemUri(componentOf(rep, 3));
  if (!code && !text) return {};
  return { unit: text || code, ...(code ? { code } : {}), ...(system ? { system } : {}) };
}

/** SN (section 2.A.73): comparator ^ num1 ^ separator/suffix ^ num2. */
function structuredNumeric(rep: Repetition, unitRep: Repetition | undefined, observation: Observation, at: At): Problem[] {
  const comparator = componentOf(rep, 1).trim();
  const num1 = componentOf(rep, 2).trim();
  const separator = componentOf(rep, 3).trim();
  const num2 = componentOf(rep, 4).trim();
  const bad = () => [error(errorCodes.dataTypeError, `OBX-5 "${[comparator, num1, separator, num2].join('^')}" is not a structured numeric (SN) value`, at(5))];
  const first = parseNumber(num1);
  const unit = units(unitRep);
  if (separator === '' && num2 === '') {
    if (first === undefined) return bad();
    if (comparator === '' || comparator === '=') observation.valueQuantity = { value: first, ...unit };
    else if (['<', '>', '<=', '>='].includes(comparator)) observation.valueQuantity = { value: first, comparator: comparator as Quantity['comparator'], ...unit };
    else return bad();
    return [];
  }
  const second = parseNumber(num2);
  if (first === undefined || second === undefined || comparator !== '') return bad();
  if (separator === '-') {
    observation.valueRange = { low: { value: first, ...unit }, high: { value: second, ...unit } };
    return [];
  }
  if (separator === ':' || separator === '/') {
    observation.valueRatio = { numerator: { value: first }, denominator: { value: second } };
    return [];
  }
  return bad();
}

/** OBX-7: "low-high", "low to high", "<x", ">x"; anything else is kept as text. */
function referenceRange(text: string, unit: Omit<Quantity, 'value'>): ObservationReferenceRange | undefined {
  if (text === '') return undefined;
  const between = /^\s*([+-]?\d*\.?\d+)\s*(?:-|to|_)\s*([+-]?\d*\.?\d+)\s*$/i.exec(text);
  if (between) return { low: { value: Number(between[1]), ...unit }, high: { value: Number(between[2]), ...unit }, text };
  const bound = /^\s*(<=?|>=?)\s*([+-]?\d*\.?\d+)\s*$/.exec(text);
  if (bound) return bound[1]!.startsWith('<') ? { high: { value: Number(bound[2]), ...unit }, text } : { low: { value: Number(bound[2]), ...unit }, text };
  return { text };
}

