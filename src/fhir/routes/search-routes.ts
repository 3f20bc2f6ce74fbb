import type { Resource } from '@medplum/fhirtypes';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SearchPosition, SearchRequest } from '../../domain/records/resource-store.ts';
import type { SiteContext } from '../../domain/site-context.ts';
import type { Queryable } from '../../storage/database.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { resultParameters, type FhirResourceDefinition } from '../capability/resource-definitions.ts';
import { searchDiagnosticReports } from '../diagnostic-report/search-reports.ts';
import { baseUrl, sendJson } from '../http/resource-response.ts';
import { decodePageToken, encodePageToken, type PageState } from '../search/paging-token.ts';
import { parseSearch, type ParsedSearch } from '../search/parse-search.ts';
import { includedResources, type IncludedPage } from '../search/include.ts';
import { checkSearchBudget } from '../search/search-budget.ts';
import { maxIncludedPerPage } from '../search/search-limits.ts';
import { subsetResource } from '../search/subset.ts';
import { queryString, searchsetBundle } from '../search/search-bundle.ts';
import { resourceStore } from '../../domain/records/resource-store.ts';
import { auditFhirAccess } from './access-audit.ts';
import { boundedSearch, formPairs, preference, queryPairs, siteOf, type FhirContext } from './fhir-context.ts';
import { fhirRoute, handlingHeader, resourceResponses, unsupportedParameterPolicy, unsupportedParameterResponse } from './route-options.ts';

/**
 * A _search body carries what a URL would (http.html#search): no more than the 16 KiB request
 * line and headers Node accepts, so POST is no way around the bounds of GET.
 */
export const maxSearchBodyBytes = 16 * 1024;

/**
 * search-type over GET and POST _search (https://hl7.org/fhir/R4/http.html#search). The next
 * link carries a signed token with the criteria and the keyset position, so following it needs
 * nothing else and cannot be bent to another site or other rows.
 */
export function registerSearchRoutes(app: FastifyInstance, context: FhirContext, definition: FhirResourceDefinition): void {
  const { type } = definition;
  const querystring = {
    type: 'object',
    description: 'Only these parameters; any other (or a modifier, or a chain) is refused with 400 unless Prefer: handling=lenient',
    properties: Object.fromEntries([
      ...definition.searchParameters.map((parameter) => [parameter.name, { type: 'string', description: `${parameter.type}: ${parameter.description}` }]),
      ...resultParameters(definition).map((parameter) => [parameter.name, { type: 'string', description: parameter.description }]),
      ['_page', { type: 'string', description: 'Paging token from a next link' }],
    ]),
    additionalProperties: false,
  };
  const schema = {
    summary: `Search ${type}`,
    description: unsupportedParameterPolicy,
    tags: [type],
    querystring,
    headers: handlingHeader,
    response: { ...resourceResponses('Bundle (searchset)', 200), 400: unsupportedParameterResponse },
  };

  app.get(`/fhir/${type}`, fhirRoute(schema), async (request, reply) => search(context, definition, request, reply, queryPairs(request)));

  app.post(
    `/fhir/${type}/_search`,
    fhirRoute(
      { ...schema, summary: `Search ${type} with form-encoded parameters`, body: { type: 'object', description: 'application/x-www-form-urlencoded search parameters' } },
      { bodyLimit: maxSearchBodyBytes },
    ),
    async (request, reply) => {
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/x-www-form-urlencoded') {
        throw new HttpProblem(415, 'unsupported-media-type', 'POST _search takes application/x-www-form-urlencoded parameters');
      }
      const body = typeof request.body === 'string' ? request.body : '';
      return search(context, definition, request, reply, [...queryPairs(request), ...formPairs(body, 'the form body')]);
    },
  );
}

async function search(
  context: FhirContext,
  definition: FhirResourceDefinition,
  request: FastifyRequest,
  reply: FastifyReply,
  pairs: [string, string][],
): Promise<FastifyReply> {
  const site = siteOf(request);
  const base = baseUrl(request);
  const token = pairs.find(([name]) => name === '_page')?.[1];
  let state: PageState | undefined;
  if (token !== undefined) {
    state = decodePageToken(await context.pagingSecret(), site.siteId, definition.type, token);
    pairs = [...state.criteria, ...state.control];
  }
  const limits = context.services.config.limits.search;
  checkSearchBudget(pairs, limits);
  const parsed = parseSearch(definition, pairs, preference(request, 'handling') !== 'lenient');
  const firstUrl = `${base}/${definition.type}${queryString([...parsed.criteria, ...parsed.control])}`;
  const selfUrl = token === undefined ? firstUrl : `${base}/${definition.type}${queryString([['_page', token]])}`;

  const found: FoundPage = await boundedSearch(context, site, async (db) => {
    const page = await runSearch(db, definition, site, parsed, state);
    const included = await includedResources(db, site, page.resources, parsed.include, parsed.revinclude);
    return { ...page, included };
  });
  const { total, next, included } = found;
  // Included resources are read like matches: the access log names them too.
  auditFhirAccess(context, request, 'search', definition.type, [...found.resources, ...included.resources], queryString([...parsed.criteria, ...parsed.control]));
  const subset = parsed.subset;
  const shown = (resources: Resource[]) => (subset ? resources.map((resource) => subsetResource(resource, subset)) : resources);
  const warnings = included.truncated
    ? [`this page refers to more than ${maxIncludedPerPage} resources to include; the first ${maxIncludedPerPage} are given: ask for a smaller _count to have them all`]
    : [];
  let nextUrl: string | undefined;
  if (next) {
    const nextToken = encodePageToken(await context.pagingSecret(), site.siteId, {
      type: definition.type,
      criteria: parsed.criteria,
      control: parsed.control,
      position: next,
    });
    nextUrl = `${base}/${definition.type}${queryString([['_page', nextToken]])}`;
  }
  return sendJson(
    reply,
    200,
    searchsetBundle({
      base,
      resources: shown(found.resources),
      included: shown(included.resources),
      warnings,
      ...(total !== undefined ? { total } : {}),
      selfUrl,
      ...(nextUrl ? { nextUrl } : {}),
      ignored: parsed.ignored,
    }),
  );
}

interface MatchPage {
  resources: Resource[];
  total: number | undefined;
  next: PageState['position'] | undefined;
}

interface FoundPage extends MatchPage {
  included: IncludedPage;
}

/** The statements of one search, on the connection `Database.search` gives (its budget applies). */
async function runSearch(db: Queryable, definition: FhirResourceDefinition, site: SiteContext, parsed: ParsedSearch, state: PageState | undefined): Promise<MatchPage> {
  if (definition.stored) {
    const result = await resourceStore(db, site).search({
      type: definition.type as SearchRequest['type'],
      conditions: parsed.conditions,
      sort: parsed.sort,
      count: parsed.count,
      total: parsed.total,
      ...(state ? { after: state.position as SearchPosition } : {}),
    });
    return { resources: result.resources, total: result.total, next: parsed.count > 0 ? result.next : undefined };
  }
  const position = state?.position;
  const result = await searchDiagnosticReports(db, site, parsed.conditions, {
    count: parsed.count,
    offset: position?.offset ?? 0,
    ...(position?.afterId ? { afterId: position.afterId } : {}),
  });
  return {
    resources: result.resources,
    total: parsed.total !== 'none' ? result.total : undefined,
    next: result.next ? { seq: '0', ...result.next } : undefined,
  };
}
