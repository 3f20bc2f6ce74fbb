import {
  searchParameters,
  storedResourceTypes,
  type SearchParameterDefinition,
  type StoredResourceType,
} from '../../domain/records/search-parameters.ts';
import type { SearchSort } from '../../domain/records/resource-store.ts';
import { defaultPageSize, maxPageSize } from '../search/search-limits.ts';

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
  /**
   * DESIGN.md: PUT of a body without id to an unknown id creates a resource with an id of the
   * service, where the site's policy permits (Patient only). This is not FHIR's updateCreate
   * (the client choosing the id), which no type offers: ids are the service's.
   */
  putWithoutIdCreates: boolean;
  /** The _sort values search honours (search.html#sort); none: _sort is not supported. */
  sorts: Exclude<SearchSort, 'created'>[];
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
      putWithoutIdCreates: type === 'Patient',
      sorts: ['_lastUpdated', '-_lastUpdated'],
    }),
  ),
  {
    type: 'DiagnosticReport',
    // The internal report keeps only its current state, so there is one version to read.
    interactions: ['read', 'vread', 'search-type'],
    searchParameters: diagnosticReportSearchParameters,
    stored: false,
    conditionalCreate: false,
    putWithoutIdCreates: false,
    // Newest first, always: the report view has no other order.
    sorts: [],
  },
];

/**
 * The result parameters (search.html#return) a search of the type applies. Any other parameter
 * is refused, or ignored under Prefer: handling=lenient (parse-search.ts).
 */
export function resultParameters(definition: FhirResourceDefinition): { name: string; description: string }[] {
  return [
    { name: '_count', description: `Page size (default ${defaultPageSize}, at most ${maxPageSize}; larger values are clamped)` },
    ...(definition.sorts.length > 0 ? [{ name: '_sort', description: `${definition.sorts.join(' or ')} (default: creation order)` }] : []),
    { name: '_total', description: 'none | estimate | accurate (default accurate)' },
    { name: '_summary', description: 'count (the total only, no entries) or false (whole resources, the default)' },
    { name: '_format', description: 'json or application/fhir+json (JSON is the only format)' },
    { name: '_pretty', description: 'true: indented JSON' },
  ];
}

export const defaultHistoryCount = 100;

/** The parameters of history-instance (http.html#history); _page comes from next links. */
export const historyParameters: { name: string; description: string }[] = [
  { name: '_count', description: `Versions per page (default ${defaultHistoryCount}, at most ${maxPageSize})` },
  { name: '_since', description: 'An instant: only versions stored at or after it (a date is midnight UTC; a time needs a zone)' },
  { name: '_at', description: 'A date or dateTime: only versions current at some moment of it' },
  { name: '_format', description: 'json' },
  { name: '_pretty', description: 'true: indented JSON' },
];

/** Every parameter name a search of the type accepts, for error messages and documentation. */
export function supportedSearchParameterNames(definition: FhirResourceDefinition): string[] {
  return [...definition.searchParameters.map((parameter) => parameter.name), ...resultParameters(definition).map((parameter) => parameter.name)];
}

export function resourceDefinition(type: string): FhirResourceDefinition | undefined {
  return resourceDefinitions.find((definition) => definition.type === type);
}
