/**
 * The one definition of what is stored and what is searchable. The store derives its index rows
 * from it, the search engine its SQL, and the FHIR surface its router and CapabilityStatement, so
 * none of them can drift from the others.
 *
 * FHIR R4 search parameter types: https://hl7.org/fhir/R4/search.html#ptypes
 */

/** How a parameter is indexed (which table or column serves it). */
export type SearchIndexKind =
  | { kind: 'token'; paths: TokenPath[] }
  | { kind: 'patient-reference'; element: string }
  | { kind: 'name' }
  | { kind: 'name-part'; part: NamePart }
  | { kind: 'birthdate' }
  | { kind: 'clinical-date'; elements: string[] };

/** The HumanName parts searched on their own (Patient `family`, `given`). */
export type NamePart = 'family' | 'given';

/** Where a token is found: a top-level element and the FHIR data type it has there. */
export interface TokenPath {
  element: string;
  type: 'Identifier' | 'CodeableConcept' | 'code';
  /** For plain `code` elements: the code system implied by the element's required binding. */
  system?: string;
}

export interface SearchParameterDefinition {
  name: string;
  type: 'token' | 'reference' | 'string' | 'date';
  description: string;
  /** Reference parameters: the resource types a value may point to. */
  target?: string[];
  index: SearchIndexKind;
}

export const storedResourceTypes = [
  'Patient',
  'Condition',
  'AllergyIntolerance',
  'Observation',
  'Procedure',
  'DocumentReference',
] as const;

export type StoredResourceType = (typeof storedResourceTypes)[number];

export function isStoredResourceType(value: string): value is StoredResourceType {
  return (storedResourceTypes as readonly string[]).includes(value);
}

const patientParameter = (element: string): SearchParameterDefinition => ({
  name: 'patient',
  type: 'reference',
  description: `Who the resource is about (${element}): Patient/{id} or a bare id`,
  target: ['Patient'],
  index: { kind: 'patient-reference', element },
});

/** R4's `subject` of the types whose patient is their subject; the store holds only Patient subjects. */
const subjectParameter: SearchParameterDefinition = {
  name: 'subject',
  type: 'reference',
  description: 'Who the resource is about: Patient/{id} or a bare id (the same as patient)',
  target: ['Patient'],
  index: { kind: 'patient-reference', element: 'subject' },
};

const codeParameter = (description: string): SearchParameterDefinition => ({
  name: 'code',
  type: 'token',
  description,
  index: { kind: 'token', paths: [{ element: 'code', type: 'CodeableConcept' }] },
});

const clinicalStatusParameter: SearchParameterDefinition = {
  name: 'clinical-status',
  type: 'token',
  description: 'The clinical status (active, inactive, resolved, …)',
  index: { kind: 'token', paths: [{ element: 'clinicalStatus', type: 'CodeableConcept' }] },
};

/** `patient` and `subject`: two names of one search over the resource's subject. */
const subjectParameters = [patientParameter('subject'), subjectParameter];

/** A date search parameter over a type's clinical date (search.html#date): ranges, not points. */
const clinicalDateParameter = (name: string, description: string, elements: string[]): SearchParameterDefinition => ({
  name,
  type: 'date',
  description: `${description} (yyyy, yyyy-mm, yyyy-mm-dd, or a dateTime with a time zone; dates without a time are UTC days; prefixes eq, ne, lt, le, gt, ge)`,
  index: { kind: 'clinical-date', elements },
});

/** The public search parameters of each stored type (DESIGN.md section 1, the seed table). */
export const searchParameters: Record<StoredResourceType, SearchParameterDefinition[]> = {
  Patient: [
    {
      name: 'identifier',
      type: 'token',
      description: 'A patient identifier (system|value)',
      index: { kind: 'token', paths: [{ element: 'identifier', type: 'Identifier' }] },
    },
    {
      name: 'name',
      type: 'string',
      description: 'Case-insensitive substring of any part of any name (text, family, given, prefix, suffix)',
      index: { kind: 'name' },
    },
    {
      name: 'family',
      type: 'string',
      description: 'The start of a family name of any name, case- and accent-insensitive',
      index: { kind: 'name-part', part: 'family' },
    },
    {
      name: 'given',
      type: 'string',
      description: 'The start of a given name of any name, case- and accent-insensitive',
      index: { kind: 'name-part', part: 'given' },
    },
    {
      name: 'birthdate',
      type: 'date',
      description: 'The birth date (yyyy, yyyy-mm or yyyy-mm-dd; prefixes eq, ne, lt, le, gt, ge)',
      index: { kind: 'birthdate' },
    },
    {
      name: 'gender',
      type: 'token',
      description: 'Administrative gender (male, female, other, unknown)',
      index: {
        kind: 'token',
        paths: [{ element: 'gender', type: 'code', system: 'http://hl7.org/fhir/administrative-gender' }],
      },
    },
  ],
  Condition: [
    ...subjectParameters,
    clinicalStatusParameter,
    codeParameter('The condition code'),
    clinicalDateParameter('onset-date', 'When the condition began (onsetDateTime or onsetPeriod)', [
      'onsetDateTime',
      'onsetPeriod',
    ]),
  ],
  AllergyIntolerance: [
    patientParameter('patient'),
    clinicalStatusParameter,
    codeParameter('The substance or product code'),
    clinicalDateParameter('date', 'When the allergy was recorded (recordedDate)', ['recordedDate']),
  ],
  Observation: [
    ...subjectParameters,
    codeParameter('The observation code'),
    {
      name: 'category',
      type: 'token',
      description: 'The kind of observation (laboratory, vital-signs, …; system|code)',
      index: { kind: 'token', paths: [{ element: 'category', type: 'CodeableConcept' }] },
    },
    {
      name: 'status',
      type: 'token',
      description: 'The status of the result (registered, preliminary, final, amended, corrected, cancelled, entered-in-error)',
      index: { kind: 'token', paths: [{ element: 'status', type: 'code', system: 'http://hl7.org/fhir/observation-status' }] },
    },
    clinicalDateParameter('date', 'When the observation applies (effectiveDateTime, effectivePeriod or effectiveInstant)', [
      'effectiveDateTime',
      'effectivePeriod',
      'effectiveInstant',
    ]),
  ],
  Procedure: [
    ...subjectParameters,
    codeParameter('The procedure code'),
    clinicalDateParameter('date', 'When the procedure was performed (performedDateTime or performedPeriod)', [
      'performedDateTime',
      'performedPeriod',
    ]),
  ],
  DocumentReference: [
    ...subjectParameters,
    {
      name: 'type',
      type: 'token',
      description: 'The kind of document (LOINC if possible)',
      index: { kind: 'token', paths: [{ element: 'type', type: 'CodeableConcept' }] },
    },
    clinicalDateParameter('date', 'When the document reference was created (date)', ['date']),
  ],
};

/**
 * Parameters indexed for the domain's own look-ups but not offered over FHIR search:
 * every stored type keeps its identifiers indexed (HL7 intake finds results by filler number).
 */
export const internalTokenParameters: Record<StoredResourceType, TokenPath[]> = {
  Patient: [],
  Condition: [{ element: 'identifier', type: 'Identifier' }],
  AllergyIntolerance: [{ element: 'identifier', type: 'Identifier' }],
  Observation: [{ element: 'identifier', type: 'Identifier' }],
  Procedure: [{ element: 'identifier', type: 'Identifier' }],
  DocumentReference: [{ element: 'identifier', type: 'Identifier' }],
};

/**
 * The elements holding the type's clinical date (a dateTime, instant or Period, told apart by its
 * value), when it has a date search parameter besides _lastUpdated: at most one such parameter a
 * type, indexed in the clinical_date columns of its current row (migration 0890).
 */
export function clinicalDateElements(type: StoredResourceType): string[] {
  for (const parameter of searchParameters[type]) {
    if (parameter.index.kind === 'clinical-date') return parameter.index.elements;
  }
  return [];
}

/** The element holding the Patient reference of each non-Patient type. */
export function patientReferenceElement(type: StoredResourceType): string | undefined {
  for (const parameter of searchParameters[type]) {
    if (parameter.index.kind === 'patient-reference') return parameter.index.element;
  }
  return undefined;
}
