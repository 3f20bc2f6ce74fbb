import type { Resource } from '@medplum/fhirtypes';
import { DomainError } from '../../domain/errors.ts';
import type { ResourceStore, SearchRequest } from '../../domain/records/resource-store.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { FhirResourceDefinition } from '../capability/resource-definitions.ts';
import { parseSearch } from '../search/parse-search.ts';
import { emptyArrayPaths } from './empty-arrays.ts';

/**
 * What a create or update asks of its body and criteria, whether it comes as a request of its
 * own (write-routes.ts) or as an entry of a transaction Bundle (bundle/).
 */

/** The search criteria of a conditional create or update and the lock key both share. */
export interface MatchCriteria {
  key: string;
  /** The matches, at most two (enough to tell one from several). */
  find(store: ResourceStore): Promise<Resource[]>;
}

/**
 * The criteria parsed strictly as If-None-Exist always was (an unsupported parameter is a 400,
 * never silently dropped, which would widen the match).
 */
export function matchCriteria(definition: FhirResourceDefinition, pairs: [string, string][], what: string): MatchCriteria {
  const parsed = parseSearch(definition, pairs, true);
  if (parsed.conditions.length === 0) throw new HttpProblem(400, 'invalid', `${what} has no search criteria`);
  const search: SearchRequest = { type: definition.type as SearchRequest['type'], conditions: parsed.conditions, sort: [], count: 2, total: 'none' };
  return { key: JSON.stringify(parsed.criteria), find: (locked: ResourceStore) => locked.search(search).then((result) => result.resources) };
}

/** The body as a resource of `type`, without the id a client may have put in it. */
export function checkedResource(body: unknown, type: string): Resource {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('invalid', 'the body must be a JSON object holding a FHIR resource');
  }
  const resourceType = (body as { resourceType?: unknown }).resourceType;
  if (resourceType !== type) {
    const message = `the body's resourceType ${JSON.stringify(resourceType ?? null)} is not ${type}`;
    throw new DomainError('invalid', message, [{ message, location: 'resourceType' }]);
  }
  const empty = emptyArrayPaths(body, type);
  if (empty.length > 0) {
    const issues = empty.map((location) => ({ message: `${location} is an empty array: leave the element out instead (FHIR JSON has no empty arrays)`, location }));
    throw new DomainError('invalid', issues[0]!.message, issues);
  }
  const { id: _ignored, ...rest } = body as Resource;
  return rest as Resource;
}

/** The id of an update's body: absent, or a string. */
export function bodyIdOf(body: unknown, type: string): string | undefined {
  const id = (body as { id?: unknown }).id;
  if (id !== undefined && typeof id !== 'string') {
    const message = 'the resource id must be a string';
    throw new DomainError('invalid', message, [{ message, location: `${type}.id` }]);
  }
  return id;
}

/** http.html#update: the body's id is the URL's; only a type that may PUT-create goes without. */
export function assertUpdateId(definition: FhirResourceDefinition, bodyId: string | undefined, pathId: string): void {
  const { type } = definition;
  if (bodyId === undefined && !definition.putWithoutIdCreates) {
    // Patient keeps the seed's exception (DESIGN.md section 1).
    const message = `the resource has no id: an update carries the id of the URL (${pathId})`;
    throw new DomainError('invalid', message, [{ message, location: `${type}.id` }]);
  }
  if (bodyId !== undefined && bodyId !== pathId) {
    const message = `the resource id ${JSON.stringify(bodyId)} differs from the id in the URL`;
    throw new DomainError('invalid', message, [{ message, location: `${type}.id` }]);
  }
}

/** The answer to a conditional update the criteria of which match nothing and that may not create. */
export function noMatchError(type: string, bodyId: string | undefined, ifMatch: string | undefined): Error {
  if (ifMatch !== undefined) return new HttpProblem(412, 'precondition-failed', `If-Match names a version, but no ${type} matches the criteria`);
  // updateCreate is false: ids are the service's (http.html#cond-update allows refusing).
  if (bodyId !== undefined) return new DomainError('invalid', `no ${type} matches the criteria, and a resource is never created at a client's id: send the body without id to create one`);
  return new DomainError('not-found', `no ${type} matches the criteria, and this site's policy does not let PUT create patients`);
}

/**
 * A PUT to an id that does not exist (or not in the key's site, answered alike) and may not
 * create: 405, the status http.html#update gives for "the resource did not exist prior to the
 * update, and the server does not allow client defined ids" (updateCreate is false). A 404 would
 * tell a client the type is not served.
 */
export function updateCreateRefused(type: string, id: string): HttpProblem {
  return new HttpProblem(
    405,
    'method-not-allowed',
    `${type}/${id} does not exist, and an update never creates a resource at a client's id (updateCreate is false): POST /fhir/${type} creates one with an id of the service`,
    { headers: { allow: 'GET, HEAD' } },
  );
}
