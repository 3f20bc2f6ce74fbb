/**
 * Coded elements (CE/CWE/CNE, HL7 v2.5.1 section 2.A.8/2.A.74) to FHIR CodeableConcept, with the
 * coding-system names of HL7 table 0396 mapped to FHIR system URIs as the HL7 v2-to-FHIR IG's
 * "CWE[CodeableConcept]" mapping does.
 */
import type { CodeableConcept, Coding } from '@medplum/fhirtypes';
import { componentOf, type Repetition } from '../er7/message.ts';

const systems: Record<string, string> = {
  LN: 'http://loinc.org',
  LOINC: 'http://loinc.org',
  SCT: 'http://snomed.info/sct',
  SNM: 'http://snomed.info/sct',
  SNOMED: 'http://snomed.info/sct',
  UCUM: 'http://unitsofmeasure.org',
  I10: 'http://hl7.org/fhir/sid/icd-10',
  I10C: 'http://hl7.org/fhir/sid/icd-10-cm',
  'ICD10CM': 'http://hl7.org/fhir/sid/icd-10-cm',
  I9: 'http://hl7.org/fhir/sid/icd-9-cm',
  I9C: 'http://hl7.org/fhir/sid/icd-9-cm',
  C4: 'http://www.ama-assn.org/go/cpt',
  CPT: 'http://www.ama-assn.org/go/cpt',
  RXN: 'http://www.nlm.nih.gov/research/umls/rxnorm',
  RXNORM: 'http://www.nlm.nih.gov/research/umls/rxnorm',
  NDC: 'http://hl7.org/fhir/sid/ndc',
  CVX: 'http://hl7.org/fhir/sid/cvx',
  CDCREC: 'urn:oid:2.16.840.1.113883.6.238',
  ISO3166: 'urn:iso:std:iso:3166',
};

/** FHIR system URI for a table 0396 name; HL7nnnn is an HL7 v2 table. Unknown names give undefined. */
export function systemUri(name: string): string | undefined {
  const key = name.trim().toUpperCase();
  if (key === '') return undefined;
  const table = /^HL7(\d{4})$/.exec(key);
  if (table) return `http://terminology.hl7.org/CodeSystem/v2-${table[1]}`;
  if (/^\d+(\.\d+)+$/.test(key)) return `urn:oid:${key}`;
  return systems[key];
}

function coding(code: string, display: string, system: string): Coding | undefined {
  if (code.trim() === '') return undefined;
  const result: Coding = { code: code.trim() };
  const uri = systemUri(system);
  if (uri) result.system = uri;
  if (display.trim() !== '') result.display = display.trim();
  return result;
}

/** Primary (components 1-3) and alternate (4-6) codings; text from component 9, else a display. */
export function codeableConcept(repetition: Repetition | undefined): CodeableConcept | undefined {
  if (!repetition) return undefined;
  const codings = [
    coding(componentOf(repetition, 1), componentOf(repetition, 2), componentOf(repetition, 3)),
    coding(componentOf(repetition, 4), componentOf(repetition, 5), componentOf(repetition, 6)),
  ].filter((c): c is Coding => c !== undefined);
  const text = componentOf(repetition, 9).trim() || componentOf(repetition, 2).trim() || componentOf(repetition, 5).trim();
  if (codings.length === 0 && text === '') return undefined;
  const concept: CodeableConcept = {};
  if (codings.length > 0) concept.coding = codings;
  if (text !== '') concept.text = text;
  return concept;
}
