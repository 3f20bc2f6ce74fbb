import type { Patient, Resource } from '@medplum/fhirtypes';
import type { FastifyInstance } from 'fastify';
import { DomainError } from '../../domain/errors.ts';
import { instantRange } from '../../domain/records/fhir-date.ts';
import { resourceStore } from '../../domain/records/resource-store.ts';
import { isStoredResourceType } from '../../domain/records/search-parameters.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { searchDiagnosticReports } from '../diagnostic-report/search-reports.ts';
import { unsupportedParameters, type IgnoredParameter } from '../http/unsupported-parameters.ts';
import { baseUrl, sendJson } from '../http/resource-response.ts';
import { queryString, searchsetBundle } from '../search/search-bundle.ts';
import { maxPageSize } from '../search/search-limits.ts';
import { auditFhirAccess } from './access-audit.ts';
import { boundedSearch, preference, queryPairs, siteOf, type FhirContext } from './fhir-context.ts';
import { fhirRoute, handlingHeader, idParams, resourceResponses, unsupportedParameterResponse } from './route-options.ts';

/**
 * Patient/{id}/$everything (https://hl7.org/fhir/R4/patient-operation-everything.html): the
 * patient, then every resource of its compartment in creation order, paged. The first page also
 * carries the imaging reports of the patient's studies (at most `maxReports`). A next link names
 * where the compartment continues; it is safe to edit, as every page is confined to the patient
 * and its site.
 */
const everythingDefaultCount = 100;
const maxReports = 1000;
const parameters: Record<string, string> = {
  _count: `Resources a page (default ${everythingDefaultCount}, at most ${maxPageSize})`,
  _since: 'Only resources last updated at or after this instant (a dateTime with a time zone, or a date)',
  _type: 'Only these types (comma-separated: Patient, Condition, AllergyIntolerance, Observation, Procedure, DocumentReference, DiagnosticReport)',
  _page: 'Where a next link continues',
  _format: 'json',
  _pretty: 'true: indented JSON',
};
const compartmentTypes = ['Patient', 'Condition', 'AllergyIntolerance', 'Observation', 'Procedure', 'DocumentReference', 'DiagnosticReport'];

interface EverythingRequest {
  count: number;
  afterSeq: string;
  since?: Date;
  types?: string[];
  applied: [string, string][];
}

export function registerEverythingRoute(app: FastifyInstance, context: FhirContext): void {
  app.get<{ Params: { id: string } }>(
    '/fhir/Patient/:id/$everything',
    fhirRoute({
      summary: 'Everything about a patient: the patient and its compartment, paged',
      tags: ['Patient'],
      params: idParams,
      querystring: {
        type: 'object',
        properties: Object.fromEntries(Object.entries(parameters).map(([name, description]) => [name, { type: 'string', description }])),
        additionalProperties: false,
      },
      headers: handlingHeader,
      response: { ...resourceResponses('Bundle (searchset)', 200), 400: unsupportedParameterResponse },
    }),
    async (request, reply) => {
      const site = siteOf(request);
      const { id } = request.params;
      const asked = parse(queryPairs(request), preference(request, 'handling') !== 'lenient');
      const wants = (type: string) => asked.types === undefined || asked.types.includes(type);
      const firstPage = asked.afterSeq === '0';
      const found = await boundedSearch(context, site, async (db) => {
        const store = resourceStore(db, site);
        const patient = await store.read<Patient>('Patient', id);
        if (!patient) return undefined;
        const changed = (resource: Resource) => asked.since === undefined || new Date(resource.meta?.lastUpdated ?? 0) >= asked.since;
        const head: Resource[] = firstPage && wants('Patient') && changed(patient) ? [patient] : [];
        const storedTypes = asked.types?.filter(isStoredResourceType);
        const page = storedTypes?.length === 0
          ? { resources: [] }
          : await store.patientCompartmentPage(id, { count: asked.count, afterSeq: asked.afterSeq, ...(asked.since ? { since: asked.since } : {}), ...(storedTypes ? { types: storedTypes } : {}) });
        const reports = firstPage && wants('DiagnosticReport')
          ? await searchDiagnosticReports(db, site, [{ kind: 'patient', ids: [id] }], { count: maxReports, offset: 0 })
          : { resources: [], total: 0 };
        return { resources: [...head, ...page.resources, ...reports.resources.filter(changed)], nextSeq: page.nextSeq, moreReports: reports.total > maxReports };
      });
      if (!found) throw new DomainError('not-found', `Patient/${id} is not known`);
      auditFhirAccess(context, request, 'search', 'Patient', found.resources, `/${id}/$everything${queryString(asked.applied)}`);
      const base = baseUrl(request);
      const url = (pairs: [string, string][]) => `${base}/Patient/${id}/$everything${queryString(pairs)}`;
      const continuing = asked.applied.filter(([name]) => name !== '_page');
      return sendJson(
        reply,
        200,
        searchsetBundle({
          base,
          resources: found.resources,
          selfUrl: url(asked.applied),
          ...(found.nextSeq !== undefined ? { nextUrl: url([...continuing, ['_page', found.nextSeq]]) } : {}),
          ...(found.moreReports ? { warnings: [`the patient has more than ${maxReports} imaging reports; the first ${maxReports} are given (DiagnosticReport?patient=${id} pages through them all)`] } : {}),
          ignored: [],
        }),
      );
    },
  );
}

function parse(pairs: [string, string][], strict: boolean): EverythingRequest {
  const asked: EverythingRequest = { count: everythingDefaultCount, afterSeq: '0', applied: [] };
  const ignored: IgnoredParameter[] = [];
  const bad = (message: string) => new HttpProblem(400, 'invalid', message);
  for (const [name, value] of pairs) {
    if (name === '_format' || name === '_pretty') continue;
    if (!(name in parameters)) {
      ignored.push({ name, reason: `${name} is not a parameter of $everything` });
      continue;
    }
    if (asked.applied.some(([seen]) => seen === name)) throw bad(`${name} may be given once`);
    if (name === '_count') {
      if (!/^\d{1,7}$/.test(value) || Number(value) === 0) throw bad(`_count must be a whole number from 1 to ${maxPageSize}`);
      asked.count = Math.min(Number(value), maxPageSize);
    } else if (name === '_page') {
      if (!/^\d{1,19}$/.test(value)) throw bad('_page is not a position this server gave');
      asked.afterSeq = value;
    } else if (name === '_since') {
      // An unencoded "+" of a zone offset arrives as a space (application/x-www-form-urlencoded).
      const range = instantRange(value.replace(' ', '+'));
      if (!range) throw bad(`_since=${value} is not a date or a dateTime with a time zone`);
      asked.since = range.start;
    } else if (name === '_type') {
      const types = value.split(',').map((type) => type.trim());
      const unknown = types.filter((type) => !compartmentTypes.includes(type));
      if (unknown.length > 0) throw bad(`_type: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in a patient's compartment here (${compartmentTypes.join(', ')})`);
      asked.types = types;
    }
    asked.applied.push([name, name === '_count' ? String(asked.count) : value]);
  }
  if (strict && ignored.length > 0) throw unsupportedParameters(Object.keys(parameters), ignored);
  return asked;
}
