import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { historyParameters, type FhirResourceDefinition } from '../capability/resource-definitions.ts';
import { baseUrl, sendJson } from '../http/resource-response.ts';
import { historyEntry } from './history-entry.ts';
import { queryString } from '../search/search-bundle.ts';
import { auditFhirAccess } from './access-audit.ts';
import { preference, queryPairs, storeFor, type FhirContext } from './fhir-context.ts';
import { parseHistory } from './history-parameters.ts';
import { fhirRoute, handlingHeader, idParams, resourceResponses, unsupportedParameterResponse } from './route-options.ts';
import { entryElement } from '../bundle/entry-element.ts';

/**
 * history-instance (https://hl7.org/fhir/R4/http.html#history): every version, newest first,
 * in a Bundle of type history. Versions never change, so the next link pages by version number.
 */
export function registerHistoryRoutes(app: FastifyInstance, context: FhirContext, definition: FhirResourceDefinition): void {
  const { type } = definition;
  app.get<{ Params: { id: string } }>(
    `/fhir/${type}/:id/_history`,
    fhirRoute({
      summary: `Versions of a ${type}, newest first`,
      description:
        'Any other parameter is refused with 400 and an OperationOutcome naming it and listing these; with ' +
        'Prefer: handling=lenient it is ignored instead and left out of the self link.',
      tags: [type],
      params: idParams,
      querystring: {
        type: 'object',
        properties: Object.fromEntries([
          ...historyParameters.map((parameter) => [parameter.name, { type: 'string', description: parameter.description }]),
          ['_page', { type: 'string', description: 'From a next link: versions before this one' }],
        ]),
        additionalProperties: false,
      },
      headers: handlingHeader,
      response: { ...resourceResponses('Bundle (history)', 200), 400: unsupportedParameterResponse },
    }),
    async (request, reply) => {
      const parsed = parseHistory(queryPairs(request), preference(request, 'handling') !== 'lenient');
      const { id } = request.params;
      const page = await storeFor(context, request).history(type as Resource['resourceType'], id, {
        count: parsed.count,
        ...(parsed.beforeVersion !== undefined ? { beforeVersion: parsed.beforeVersion } : {}),
        ...(parsed.since ? { since: parsed.since } : {}),
        ...(parsed.at ? { at: parsed.at } : {}),
      });
      if (!page) throw new DomainError('not-found', `${type}/${id} is not known`);
      auditFhirAccess(context, request, 'history', type, page.versions);
      const base = baseUrl(request);
      const historyUrl = `${base}/${type}/${id}/_history`;
      const oldest = page.versions[page.versions.length - 1];
      const oldestVersion = Number(oldest?.meta?.versionId ?? 1);
      const self: [string, string][] = [...parsed.applied, ...(parsed.beforeVersion !== undefined ? [['_page', String(parsed.beforeVersion)] as [string, string]] : [])];
      const link = [{ relation: 'self', url: `${historyUrl}${queryString(self)}` }];
      if (parsed.count > 0 && oldest && oldestVersion > 1 && page.versions.length === parsed.count) {
        link.push({ relation: 'next', url: `${historyUrl}${queryString([...parsed.applied, ['_page', String(oldestVersion)]])}` });
      }
      const bundle: Bundle = {
        resourceType: 'Bundle',
        type: 'history',
        total: page.total,
        link,
        ...entryElement(page.versions.map((version) => historyEntry(base, version))),
      };
      return sendJson(reply, 200, bundle);
    },
  );
}
