import { sortableKeys } from '../../domain/records/search.ts';
import {
  searchParameters,
  storedResourceTypes,
  type SearchParameterDefinition,
  type StoredResourceType,
} from '../../domain/records/search-parameters.ts';
import { defaultPageSize, maxIncludedPerPage, maxPageSize } from '../search/search-limits.ts';

/**
 * What the FHIR origin serves, type by type: the router registers exactly these interactions,
 * the search parser accepts exactly these parameters, and the CapabilityStatement is generated
 * from this list, so the three cannot disagree (https://hl7.org/fhir/R4/capabilitystatement.html).
 */

export type TypeInteraction = 'read' | 'vread' | 'history-instance' | 'history-type' | 'search-type' | 'create' | 'update';

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
  /** The _sort keys search honours (search.html#sort), each ascending or with - descending; none: _sort is not supported. */
  sorts: string[];
}

/** Result and common parameters that work on every type (search.html#all). */
export const commonSearchParameters: FhirSearchParameter[] = [
  { name: '_id', type: 'token', description: 'The logical id of the resource' },
  { name: '_lastUpdated', type: 'date', description: 'When the resource version was stored (prefixes eq, ne, lt, le, gt, ge)' },
];

export const storedInteractions: TypeInteraction[] = ['read', 'vread', 'history-instance', 'history-type', 'search-type', 'create', 'update'];

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
      sorts: sortableKeys(type),
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

/** A reference search parameter that _include or _revinclude follows: sourceType's parameter points to targetType. */
export interface IncludeTarget {
  sourceType: string;
  parameter: string;
  targetType: string;
}

/** Every reference search parameter of the served types (all point to Patient). */
export const referenceParameters: IncludeTarget[] = resourceDefinitionsReferences();

function resourceDefinitionsReferences(): IncludeTarget[] {
  return resourceDefinitions.flatMap((definition) =>
    definition.searchParameters
      .filter((parameter) => parameter.type === 'reference')
      .flatMap((parameter) => (parameter.target ?? []).map((targetType) => ({ sourceType: definition.type, parameter: parameter.name, targetType }))),
  );
}

/** What _include accepts on a search of the type: its own reference parameters. */
export function includeTargets(definition: FhirResourceDefinition): IncludeTarget[] {
  return referenceParameters.filter((target) => target.sourceType === definition.type);
}

/** What _revinclude accepts on a search of the type: the reference parameters pointing to it. */
export function revIncludeTargets(definition: FhirResourceDefinition): IncludeTarget[] {
  return referenceParameters.filter((target) => target.targetType === definition.type);
}

/**
 * The result parameters (search.html#return) a search of the type applies. Any other parameter
 * is refused, or ignored under Prefer: handling=lenient (parse-search.ts).
 */
export function resultParameters(definition: FhirResourceDefinition): { name: string; description: string }[] {
  const includes = includeTargets(definition).map((target) => `${target.sourceType}:${target.parameter}`);
  const revIncludes = revIncludeTargets(definition).map((target) => `${target.sourceType}:${target.parameter}`);
  const included = `at most ${maxIncludedPerPage} included resources a page, then a warning`;
  return [
    { name: '_count', description: `Page size (default ${defaultPageSize}, at most ${maxPageSize}; larger values are clamped)` },
    ...(definition.sorts.length > 0
      ? [{ name: '_sort', description: `comma-separated keys among ${definition.sorts.join('|')}; a leading - sorts descending; default: creation order` }]
      : []),
    { name: '_total', description: 'none | estimate | accurate (default accurate)' },
    { name: '_summary', description: 'true, text, data (a SUBSETTED part of each resource), count (the total only, no entries) or false (whole resources, the default)' },
    { name: '_elements', description: 'comma-separated top-level element names: only those and the mandatory ones, tagged SUBSETTED' },
    ...(includes.length > 0 ? [{ name: '_include', description: `${includes.join(', ')}: the referenced resources, search mode include; ${included}` }] : []),
    ...(revIncludes.length > 0 ? [{ name: '_revinclude', description: `${revIncludes.join(', ')}: the resources referring to the matches, search mode include; ${included}` }] : []),
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
