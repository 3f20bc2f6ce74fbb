import type { Bundle } from '@medplum/fhirtypes';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readVersionsByTime } from '../../domain/records/history.ts';
import { storedResourceTypes, type StoredResourceType } from '../../domain/records/search-parameters.ts';
import { historyParameters } from '../capability/resource-definitions.ts';
import { baseUrl, sendJson } from '../http/resource-response.ts';
import { decodePageToken, encodePageToken } from '../search/paging-token.ts';
import { checkSearchBudget } from '../search/search-budget.ts';
import { queryString } from '../search/search-bundle.ts';
import { auditFhirAccess } from './access-audit.ts';
import { boundedSearch, preference, queryPairs, siteOf, type FhirContext } from './fhir-context.ts';
import { historyEntry } from './history-entry.ts';
import { parseHistory } from './history-parameters.ts';
import { registerMethodNotAllowed } from './method-not-allowed.ts';
import { fhirRoute, handlingHeader, resourceResponses, unsupportedParameterResponse } from './route-options.ts';
import { entryElement } from '../bundle/entry-element.ts';

/**
 * history-type and history-system (https://hl7.org/fhir/R4/http.html#history): every version of
 * the key's site's resources of one type, or of every stored type, newest first, with _since,
 * _at and _count. They read as much as a search and run under the same bounds (boundedSearch).
 * The next link carries a signed token with the parameters and the last version shown.
 */
const querystring = {
  type: 'object',
  properties: Object.fromEntries([
    ...historyParameters.map((parameter) => [parameter.name, { type: 'string', description: parameter.description }]),
    ['_page', { type: 'string', description: 'Paging token from a next link' }],
  ]),
  additionalProperties: false,
};

export function registerTypeHistoryRoute(app: FastifyInstance, context: FhirContext, type: StoredResourceType): void {
  app.get(
    `/fhir/${type}/_history`,
    fhirRoute({
      summary: `Versions of every ${type} of the site, newest first`,
      description: 'Any other parameter is refused with 400 and an OperationOutcome naming it; with Prefer: handling=lenient it is ignored instead.',
      tags: [type],
      querystring,
      headers: handlingHeader,
      response: { ...resourceResponses('Bundle (history)', 200), 400: unsupportedParameterResponse },
    }),
    async (request, reply) => sendJson(reply, 200, await historyBundle(context, request, type)),
  );
  registerMethodNotAllowed(app, `/fhir/${type}/_history`, ['GET'], type);
}

export function registerSystemHistoryRoute(app: FastifyInstance, context: FhirContext): void {
  app.get(
    '/fhir/_history',
    fhirRoute({
      summary: `Versions of every resource of the site (${storedResourceTypes.join(', ')}), newest first`,
      description: 'Any other parameter is refused with 400 and an OperationOutcome naming it; with Prefer: handling=lenient it is ignored instead.',
      tags: ['history'],
      querystring,
      headers: handlingHeader,
      response: { ...resourceResponses('Bundle (history)', 200), 400: unsupportedParameterResponse },
    }),
    async (request, reply) => sendJson(reply, 200, await historyBundle(context, request, undefined)),
  );
  registerMethodNotAllowed(app, '/fhir/_history', ['GET'], 'history');
}

async function historyBundle(context: FhirContext, request: FastifyRequest, type: StoredResourceType | undefined): Promise<Bundle> {
  const site = siteOf(request);
  const base = baseUrl(request);
  const path = type === undefined ? '_history' : `${type}/_history`;
  let pairs = queryPairs(request);
  const token = pairs.find(([name]) => name === '_page')?.[1];
  const state = token === undefined ? undefined : decodePageToken(await context.pagingSecret(), site.siteId, path, token);
  if (state) pairs = state.criteria;
  checkSearchBudget(pairs, context.services.config.limits.search);
  const parsed = parseHistory(
    pairs.filter(([name]) => name !== '_page'),
    preference(request, 'handling') !== 'lenient',
  );
  const page = await boundedSearch(context, site, (db) =>
    readVersionsByTime(db, site, type === undefined ? storedResourceTypes : [type], {
      count: parsed.count,
      ...(state?.position.version ? { before: state.position.version } : {}),
      ...(parsed.since ? { since: parsed.since } : {}),
      ...(parsed.at ? { at: parsed.at } : {}),
    }),
  );
  auditFhirAccess(context, request, 'history', type ?? '*', page.versions, queryString(parsed.applied));
  const link = [{ relation: 'self', url: `${base}/${path}${queryString(token === undefined ? parsed.applied : [['_page', token]])}` }];
  if (page.next && parsed.count > 0) {
    const next = encodePageToken(await context.pagingSecret(), site.siteId, { type: path, criteria: parsed.applied, control: [], position: { seq: '0', version: page.next } });
    link.push({ relation: 'next', url: `${base}/${path}${queryString([['_page', next]])}` });
  }
  return {
    resourceType: 'Bundle',
    type: 'history',
    ...(page.total !== undefined ? { total: page.total } : {}),
    link,
    ...entryElement(page.versions.map((version) => historyEntry(base, version))),
  };
}
