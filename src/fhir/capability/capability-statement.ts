import type { CapabilityStatement, CapabilityStatementRestResource } from '@medplum/fhirtypes';
import { maxPageSize } from '../search/search-limits.ts';
import { resourceDefinitions } from './resource-definitions.ts';

/**
 * GET /fhir/metadata (https://hl7.org/fhir/R4/http.html#capabilities): generated from the same
 * definitions the router and the search parser use.
 */
export function capabilityStatement(baseUrl: string, software: { name: string; version: string }): CapabilityStatement {
  return {
    resourceType: 'CapabilityStatement',
    status: 'active',
    date: '2026-01-01',
    publisher: 'Clinical Gateway',
    kind: 'instance',
    software,
    implementation: { description: 'Clinical Gateway FHIR R4 API (one site per API key)', url: baseUrl },
    fhirVersion: '4.0.1',
    format: ['json'],
    rest: [
      {
        mode: 'server',
        documentation: `Search pages hold at most ${maxPageSize} entries; paging links are signed and bound to the site of the key.`,
        security: {
          cors: false,
          description:
            'Every request carries an API key of one site in the X-API-Key header. The key confines every interaction ' +
            'to its site: resources of other sites are answered exactly like resources that do not exist (404).',
        },
        resource: resourceDefinitions.map((definition) => ({
          type: definition.type as CapabilityStatementRestResource['type'],
          interaction: definition.interactions.map((code) => ({ code })),
          versioning: definition.stored ? ('versioned-update' as const) : ('versioned' as const),
          readHistory: definition.stored,
          updateCreate: definition.updateCreate,
          conditionalCreate: definition.conditionalCreate,
          conditionalRead: 'not-supported' as const,
          conditionalUpdate: false,
          conditionalDelete: 'not-supported' as const,
          searchParam: definition.searchParameters.map((parameter) => ({
            name: parameter.name,
            type: parameter.type,
            documentation: parameter.description,
          })),
        })),
      },
    ],
  };
}
