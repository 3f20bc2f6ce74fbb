import type { Resource } from '@medplum/fhirtypes';
import type { FastifyInstance } from 'fastify';
import { readReport } from '../../domain/imaging/reports.ts';
import { DomainError } from '../../domain/errors.ts';
import type { FhirResourceDefinition } from '../capability/resource-definitions.ts';
import { diagnosticReportOf } from '../../domain/imaging/diagnostic-report-view.ts';
import { sendReadResource } from '../http/resource-response.ts';
import { auditFhirAccess } from './access-audit.ts';
import { readSubset, subsetResource } from '../search/subset.ts';
import { databaseFor, queryPairs, siteOf, storeFor, type FhirContext } from './fhir-context.ts';
import { fhirRoute, idParams, resourceResponses } from './route-options.ts';

const conditionalReadHeaders = {
  type: 'object',
  properties: {
    'if-none-match': { type: 'string', description: 'Conditional read: W/"{versionId}" (or a list, or *); 304 when it names the current version' },
    'if-modified-since': { type: 'string', description: 'Conditional read: an HTTP-date; 304 when the resource is not newer (ignored with If-None-Match)' },
  },
};
const readQuerystring = {
  type: 'object',
  properties: {
    _summary: { type: 'string', description: 'true, text or data: a SUBSETTED part of the resource (search.html#summary); false: all of it' },
    _elements: { type: 'string', description: 'Comma-separated top-level element names: only those and the mandatory ones, tagged SUBSETTED' },
    _format: { type: 'string', description: 'json' },
    _pretty: { type: 'string', description: 'true: indented JSON' },
  },
};
const notModifiedResponse = { 304: { description: 'Not Modified: the client\'s copy is current (ETag and Last-Modified, no body)', type: 'null' } };

/**
 * read and vread (https://hl7.org/fhir/R4/http.html#read, #vread), both conditional (#cread:
 * If-None-Match, If-Modified-Since), and HEAD on both (Fastify answers HEAD from the GET route).
 */
export function registerReadRoutes(app: FastifyInstance, context: FhirContext, definition: FhirResourceDefinition): void {
  const { type } = definition;
  const notFound = (id: string, versionId?: string) => {
    const what = versionId === undefined ? `${type}/${id}` : `${type}/${id}/_history/${versionId}`;
    return new DomainError('not-found', `${what} is not known`);
  };
  const subsetted = (request: Parameters<typeof siteOf>[0], resource: Resource): Resource => {
    const subset = readSubset(type, queryPairs(request));
    return subset ? subsetResource(resource, subset) : resource;
  };
  const readCurrent = async (request: Parameters<typeof siteOf>[0], id: string): Promise<Resource | undefined> => {
    if (definition.stored) return storeFor(context, request).read(type as Resource['resourceType'], id);
    const report = await readReport(databaseFor(context), siteOf(request), id);
    return report ? diagnosticReportOf(report) : undefined;
  };

  app.get<{ Params: { id: string } }>(
    `/fhir/${type}/:id`,
    fhirRoute({ summary: `Read a ${type}`, tags: [type], params: idParams, querystring: readQuerystring, headers: conditionalReadHeaders, response: { ...resourceResponses(type, 200), ...notModifiedResponse } }),
    async (request, reply) => {
      const resource = await readCurrent(request, request.params.id);
      if (!resource) throw notFound(request.params.id);
      auditFhirAccess(context, request, 'read', type, [resource]);
      return sendReadResource(reply, subsetted(request, resource));
    },
  );

  app.get<{ Params: { id: string; vid: string } }>(
    `/fhir/${type}/:id/_history/:vid`,
    fhirRoute({
      summary: `Read one version of a ${type}`,
      tags: [type],
      params: { ...idParams, properties: { ...idParams.properties, vid: { type: 'string', description: 'The version id' } }, required: ['id', 'vid'] },
      querystring: readQuerystring,
      headers: conditionalReadHeaders,
      response: { ...resourceResponses(type, 200), ...notModifiedResponse },
    }),
    async (request, reply) => {
      const { id, vid } = request.params;
      let resource: Resource | undefined;
      if (definition.stored) {
        resource = await storeFor(context, request).vread(type as Resource['resourceType'], id, vid);
      } else {
        const current = await readCurrent(request, id);
        resource = current?.meta?.versionId === vid ? current : undefined;
      }
      if (!resource) throw notFound(id, vid);
      auditFhirAccess(context, request, 'vread', type, [resource]);
      return sendReadResource(reply, subsetted(request, resource));
    },
  );
}
