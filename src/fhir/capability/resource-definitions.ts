import {
  searchParameters,
  storedResourceTypes,
  type SearchParameterDefinition,
  type StoredResourceType,
} from '../../domain/records/search-parameters.ts';

/**
 * What the FHIR origin serves, type by type: the router registers exactly these interactions,
 * the search parser accepts exactly these parameters, and the CapabilityStatement is generated
 * from this list, so the three cannot disagree (https://hl7.org/fhir/R4/capabilitystatement.html).
 */

export type TypeInteraction = 'read' | 'vread' | 'history-instance' | 'search-type' | 'create' | 'update';

export interface FhirSearchParameter {
  name: string;
  type: 'token' | 'reference' | 'string' | 'date';
  description: string;
  target?: string[];
}

export interface FhirResourceDefinition {
  type: string;
  interactions: TypeInteraction[];
  searchParameters: FhirSearchParameter[];
  /** Stored in the versioned record store; otherwise a read-only view. */
  stored: boolean;
  conditionalCreate: boolean;
  /** Allowed value of the PUT-without-id-creates policy (Patient only). */
  updateCreate: boolean;
}

/** Result and common parameters that work on every type (search.html#all). */
export const commonSearchParameters: FhirSearchParameter[] = [
  { name: '_id', type: 'token', description: 'The logical id of the resource' },
  { name: '_lastUpdated', type: 'date', description: 'When the resource version was stored (prefixes eq, ne, lt, le, gt, ge)' },
];

export const storedInteractions: TypeInteraction[] = ['read', 'vread', 'history-instance', 'search-type', 'create', 'update'];

function fromDomain(parameter: SearchParameterDefinition): FhirSearchParameter {
  return {
    name: parameter.name,
    type: parameter.type,
    description: parameter.description,
    ...(parameter.target ? { target: parameter.target } : {}),
  };
}

export const diagnosticReportSearchParameters: FhirSearchParameter[] = [
  { name: '_id', type: 'token', description: 'The logical id of the report' },
  { name: 'patient', type: 'reference', description: 'The patient of the report\'s study: Patient/{id} or a bare id', target: ['Patient'] },
  { name: 'status', type: 'token', description: 'final selects completed reports; any other value selects preliminary (draft) reports' },
];

export const resourceDefinitions: FhirResourceDefinition[] = [
  ...storedResourceTypes.map(
    (type: StoredResourceType): FhirResourceDefinition => ({
      type,
      interactions: storedInteractions,
      searchParameters: [...commonSearchParameters, ...searchParameters[type].map(fromDomain)],
      stored: true,
      conditionalCreate: true,
      updateCreate: type === 'Patient',
    }),
  ),
  {
    type: 'DiagnosticReport',
    // The internal report keeps only its current state, so there is one version to read.
    interactions: ['read', 'vread', 'search-type'],
    searchParameters: diagnosticReportSearchParameters,
    stored: false,
    conditionalCreate: false,
    updateCreate: false,
  },
];

export function resourceDefinition(type: string): FhirResourceDefinition | undefined {
  return resourceDefinitions.find((definition) => definition.type === type);
}
