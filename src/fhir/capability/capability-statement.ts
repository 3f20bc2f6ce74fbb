import type { CapabilityStatement, CapabilityStatementRestResource } from '@medplum/fhirtypes';
import { maxPageSize } from '../search/search-limits.ts';
import {
  historyParameters,
  includeTargets,
  resourceDefinitions,
  resultParameters,
  revIncludeTargets,
  type FhirResourceDefinition,
} from './resource-definitions.ts';

export const bulkDataCapabilityStatement = 'http://hl7.org/fhir/uv/bulkdata/CapabilityStatement/bulk-data';

const bulkExportDocumentation =
  'Bulk Data Access IG v2.0.0 $export (Prefer: respond-async required) of the whole site, or (Patient) of the patient compartment: ' +
  'patients and every resource whose subject or patient is one. Parameters: _type, _since, _outputFormat (application/fhir+ndjson, ' +
  'application/ndjson, ndjson). Files are kept for CG_EXPORT_RETENTION_HOURS after the export finishes and are downloaded with the same API key.';
const everythingDocumentation =
  'Instance level only (GET Patient/{id}/$everything): the patient, every resource whose subject or patient it is in creation order, ' +
  'and on the first page the imaging reports of its studies, as a paged searchset. Parameters: _count, _since, _type.';

/**
 * GET /fhir/metadata (https://hl7.org/fhir/R4/http.html#capabilities): generated from the same
 * definitions the router and the search parser use.
 */
export function capabilityStatement(baseUrl: string, software: { name: string; version: string }, options: { cors: boolean; bundle: { maxEntries: number; maxBytes: number } }): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: '2026-01-01',
    publisher: 'Clinical Gateway',
    kind: 'instance',
    software,
    implementation: { description: 'Clinical Gateway FHIR R4 API (one site per API key)', url: baseUrl },
    fhirVersion: '4.0.1',
    // Bulk Data Access IG v2.0.0: $export at the system level and for Patient (routes/export-routes.ts).
    instantiates: [bulkDataCapabilityStatement],
    format: ['json'],
    rest: [
      {
        mode: 'server',
        documentation:
          `Search pages hold at most ${maxPageSize} entries; paging links are signed and bound to the site of the key. ` +
          'A search or history parameter the server does not support (an unknown name, a modifier, a chain, an unsupported ' +
          'result parameter or value) is refused with 400 and an OperationOutcome naming it and listing the supported ones, ' +
          'so that a search never silently widens; with the header Prefer: handling=lenient such parameters are ignored ' +
          'instead, reported in an OperationOutcome entry (search mode outcome), and left out of the self link, which shows ' +
          'only what was applied (https://hl7.org/fhir/R4/search.html#errors).',
        // POST /fhir (bundle/bundle-route.ts): every entry is one of the type interactions below.
        interaction: [
          { code: 'batch', documentation: `At most ${options.bundle.maxEntries} entries and ${options.bundle.maxBytes} bytes; each entry is answered on its own.` },
          {
            code: 'transaction',
            documentation:
              `At most ${options.bundle.maxEntries} entries and ${options.bundle.maxBytes} bytes. All writes in one database transaction, or none; ` +
              'urn:uuid: and urn:oid: fullUrls resolved and references rewritten; ifNoneExist, conditional update and conditional references; ' +
              'processed in the order of http.html#transaction (creates, updates, then reads), the reads inside the same database transaction, ' +
              'seeing its writes.',
          },
          // GET /fhir/_history: the versions of every stored type of the site (history-list-routes.ts).
          { code: 'history-system', documentation: 'Newest first, with _since, _at and _count; the stored types only (DiagnosticReport keeps no versions).' },
        ],
        security: {
          cors: options.cors,
          description:
            'Every request carries an API key of one site in the X-API-Key header. The key confines every interaction ' +
            'to its site: resources of other sites are answered exactly like resources that do not exist (404).',
        },
        operation: [{ name: 'export', definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/export', documentation: bulkExportDocumentation }],
        resource: resourceDefinitions.map((definition) => ({
          type: definition.type as CapabilityStatementRestResource['type'],
          documentation: resourceDocumentation(definition),
          interaction: definition.interactions.map((code) => ({ code })),
          versioning: definition.stored ? ('versioned-update' as const) : ('versioned' as const),
          readHistory: definition.stored,
          // Ids are the service's: PUT never creates a resource at the id of the URL.
          updateCreate: false,
          conditionalCreate: definition.conditionalCreate,
          // If-None-Match and If-Modified-Since (conditional-read.ts).
          conditionalRead: 'full-support' as const,
          conditionalUpdate: definition.interactions.includes('update'),
          conditionalDelete: 'not-supported' as const,
          searchInclude: includeTargets(definition).map((target) => `${target.sourceType}:${target.parameter}`),
          searchRevInclude: revIncludeTargets(definition).map((target) => `${target.sourceType}:${target.parameter}`),
          searchParam: [
            ...definition.searchParameters.map((parameter) => ({
              name: parameter.name,
              type: parameter.type,
              documentation: parameter.description,
            })),
            // The result parameters that choose order and content (search.html#return).
            ...resultParameters(definition)
              .filter((parameter) => claimedResultParameters.includes(parameter.name))
              .map((parameter) => ({ name: parameter.name, type: 'special' as const, documentation: parameter.description })),
          ],
          ...(definition.type === 'Patient'
            ? {
                operation: [
                  { name: 'export', definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/patient-export', documentation: bulkExportDocumentation },
                  { name: 'everything', definition: 'http://hl7.org/fhir/OperationDefinition/Patient-everything', documentation: everythingDocumentation },
                ],
              }
            : {}),
        })),
      },
    ],
  };
}

const claimedResultParameters = ['_sort', '_summary', '_elements'];

function resourceDocumentation(definition: FhirResourceDefinition): string {
  const results = resultParameters(definition)
    .map((parameter) => `${parameter.name} (${parameter.description})`)
    .join(', ');
  const notes = [`Result parameters: ${results}. No modifiers or chained parameters are supported.`];
  if (definition.interactions.includes('history-instance')) {
    const applied = historyParameters.filter((parameter) => parameter.name !== '_format' && parameter.name !== '_pretty');
    notes.push(`History takes ${applied.map((parameter) => `${parameter.name} (${parameter.description})`).join(', ')}.`);
  }
  if (definition.interactions.includes('update')) {
    notes.push(
      definition.putWithoutIdCreates
        ? 'Update needs the id in the body, except that a body without id updates the resource of the URL, or, where the site\'s policy permits, creates one with an id of the service when the URL\'s id is unknown.'
        : 'Update needs the id of the URL in the body (http.html#update): a body without id is refused with 400.',
    );
  }
  return notes.join(' ');
}
