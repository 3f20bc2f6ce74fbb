import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { FhirResourceDefinition } from '../capability/resource-definitions.ts';
import { baseUrl, etag, sendJson } from '../http/resource-response.ts';
import { maxPageSize } from '../search/search-limits.ts';
import { queryPairs, storeFor, type FhirContext } from './fhir-context.ts';
import { fhirRoute, idParams, resourceResponses } from './route-options.ts';

const defaultHistoryCount = 100;

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
      tags: [type],
      params: idParams,
      querystring: {
        type: 'object',
        properties: {
          _count: { type: 'string', description: `Versions per page (default ${defaultHistoryCount}, at most ${maxPageSize})` },
          _page: { type: 'string', description: 'From a next link: versions before this one' },
        },
      },
      response: resourceResponses('Bundle (history)', 200),
    }),
    async (request, reply) => {
      const pairs = new Map(queryPairs(request));
      const countText = pairs.get('_count');
      if (countText !== undefined && !/^\d{1,7}$/.test(countText)) throw new HttpProblem(400, 'invalid', `_count must be a whole number from 0 to ${maxPageSize}`);
      const count = Math.min(countText === undefined ? defaultHistoryCount : Number(countText), maxPageSize);
      const before = pairs.get('_page');
      if (before !== undefined && !/^[1-9]\d{0,8}$/.test(before)) throw new HttpProblem(400, 'invalid', '_page is not a version number of this history');
      const { id } = request.params;
      const page = await storeFor(context, request).history(type as Resource['resourceType'], id, {
        count,
        ...(before !== undefined ? { beforeVersion: Number(before) } : {}),
      });
      if (!page) throw new DomainError('not-found', `${type}/${id} is not known`);
      const base = baseUrl(request);
      const oldest = page.versions[page.versions.length - 1];
      const oldestVersion = Number(oldest?.meta?.versionId ?? 1);
      const link = [{ relation: 'self', url: `${base}${request.url.split('?')[0]}?${new URLSearchParams([...pairs.entries()])}` }];
      if (count > 0 && oldest && oldestVersion > 1) {
        link.push({ relation: 'next', url: `${base}/${type}/${id}/_history?_count=${count}&_page=${oldestVersion}` });
      }
      const bundle: Bundle = {
        resourceType: 'Bundle',
        type: 'history',
        total: page.total,
        link,
        entry: page.versions.map((version) => ({
          fullUrl: `${base}/${type}/${id}`,
          resource: version,
          request: { method: version.meta?.versionId === '1' ? 'POST' : 'PUT', url: version.meta?.versionId === '1' ? type : `${type}/${id}` },
          response: {
            status: version.meta?.versionId === '1' ? '201 Created' : '200 OK',
            etag: etag(version.meta?.versionId),
            ...(version.meta?.lastUpdated ? { lastModified: version.meta.lastUpdated } : {}),
          },
        })),
      };
      return sendJson(reply, 200, bundle);
    },
  );
}
