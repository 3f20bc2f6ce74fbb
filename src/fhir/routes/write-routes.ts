import type { Resource } from '@medplum/fhirtypes';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDomainError } from '../../domain/errors.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { FhirResourceDefinition } from '../capability/resource-definitions.ts';
import { localizeReferences } from '../bundle/references.ts';
import { assertJsonBody } from '../http/content-negotiation.ts';
import { baseUrl, ifMatchVersion, sendJson, sendResource, versionHeaders, versionLocation } from '../http/resource-response.ts';
import { informationOutcome } from '../outcome.ts';
import { formPairs, preference, queryPairs, siteOf, storeFor, type FhirContext } from './fhir-context.ts';
import { assertUpdateId, bodyIdOf, checkedResource, matchCriteria, noMatchError, updateCreateRefused } from './write-rules.ts';
import { fhirRoute, idParams, maxResourceBytes, resourceBody, resourceResponses } from './route-options.ts';

/**
 * create, conditional create, update and conditional update (https://hl7.org/fhir/R4/http.html#create,
 * #ccreate, #update, #cond-update). Ids are the service's: a client id on create is ignored.
 */
export function registerWriteRoutes(app: FastifyInstance, context: FhirContext, definition: FhirResourceDefinition): void {
  const { type } = definition;
  const headers = {
    type: 'object',
    properties: {
      'if-none-exist': { type: 'string', description: 'Conditional create: search criteria (e.g. identifier=urn:mrn|123)' },
      prefer: { type: 'string', description: 'return=minimal | representation | OperationOutcome' },
    },
  };

  app.post<{ Body: unknown }>(
    `/fhir/${type}`,
    fhirRoute(
      { summary: `Create a ${type}`, tags: [type], headers, body: resourceBody(type), response: resourceResponses(type, 201) },
      { bodyLimit: maxResourceBytes },
    ),
    async (request, reply) => {
      const resource = resourceFrom(request, type);
      const store = storeFor(context, request);
      const criteria = request.headers['if-none-exist'];
      if (typeof criteria === 'string') {
        const { key, find } = matchCriteria(definition, formPairs(criteria.replace(/^[^?]*\?/, ''), 'If-None-Exist'), 'If-None-Exist');
        const outcome = await store.createIfNoneExist(key, find, resource);
        if (outcome.outcome === 'ambiguous') {
          throw new HttpProblem(412, 'precondition-failed', `If-None-Exist matches more than one ${type}`);
        }
        if (outcome.outcome === 'exists') {
          reply.header('location', versionLocation(request, outcome.resource));
          return respond(request, reply, 200, outcome.resource);
        }
        reply.header('location', versionLocation(request, outcome.resource));
        return respond(request, reply, 201, outcome.resource);
      }
      const created = await store.create(resource);
      reply.header('location', versionLocation(request, created));
      return respond(request, reply, 201, created);
    },
  );

  app.put<{ Body: unknown }>(
    `/fhir/${type}`,
    fhirRoute(
      {
        summary: `Conditional update of a ${type}: update the one ${type} the search criteria match, or create one when none does`,
        description:
          'https://hl7.org/fhir/R4/http.html#cond-update. The query string holds search criteria, taken strictly (an unsupported ' +
          'parameter is a 400). One match: a new version of it (200); the body\'s id, if any, must be its id. No match: a new ' +
          `${type} (201) when the body has no id${definition.putWithoutIdCreates ? " and the site's policy lets PUT create patients" : ''}. ` +
          'Several matches: 412. Concurrent conditional updates with the same criteria create at most one resource.',
        tags: [type],
        querystring: { type: 'object', description: `Search criteria of ${type} (see GET /fhir/${type})`, additionalProperties: { type: 'string' } },
        headers: {
          type: 'object',
          properties: { 'if-match': { type: 'string', description: 'W/"{versionId}": update the match only at that version' }, prefer: headers.properties.prefer },
        },
        body: resourceBody(type),
        response: { ...resourceResponses(type, 200), 201: { description: `The new ${type} (no match)`, type: 'object', additionalProperties: true } },
      },
      { bodyLimit: maxResourceBytes },
    ),
    async (request, reply) => {
      const resource = resourceFrom(request, type);
      const bodyId = bodyIdOf(request.body, type);
      const ifMatch = ifMatchVersion(request);
      if (ifMatch === null) throw new HttpProblem(400, 'invalid', 'If-Match must be an ETag such as W/"3"');
      const { key, find } = matchCriteria(definition, queryPairs(request), 'a conditional update');
      const policyAllowsCreate = !definition.putWithoutIdCreates || siteOf(request).policies.patientPutCreates;
      const outcome = await storeFor(context, request).updateIfOneMatches(key, find, bodyId === undefined ? resource : { ...resource, id: bodyId }, {
        mayCreate: bodyId === undefined && ifMatch === undefined && policyAllowsCreate,
        ...(ifMatch === undefined ? {} : { ifMatchVersion: ifMatch }),
      });
      switch (outcome.outcome) {
        case 'ambiguous':
          throw new HttpProblem(412, 'precondition-failed', `the criteria match ${outcome.count} or more ${type} resources; a conditional update needs at most one`);
        case 'no-match':
          throw noMatchError(type, bodyId, ifMatch);
        case 'created':
          reply.header('location', versionLocation(request, outcome.resource));
          return respond(request, reply, 201, outcome.resource);
        case 'updated':
          reply.header('content-location', versionLocation(request, outcome.resource));
          return respond(request, reply, 200, outcome.resource);
      }
    },
  );

  app.put<{ Params: { id: string }; Body: unknown }>(
    `/fhir/${type}/:id`,
    fhirRoute(
      {
        summary: `Update a ${type} (a new version)`,
        tags: [type],
        params: idParams,
        headers: {
          type: 'object',
          properties: { 'if-match': { type: 'string', description: 'W/"{versionId}": update only that version' }, prefer: headers.properties.prefer },
        },
        body: resourceBody(type),
        response: resourceResponses(type, 200),
      },
      { bodyLimit: maxResourceBytes },
    ),
    async (request, reply) => {
      const resource = resourceFrom(request, type);
      const pathId = request.params.id;
      const bodyId = bodyIdOf(request.body, type);
      assertUpdateId(definition, bodyId, pathId);
      const ifMatch = ifMatchVersion(request);
      if (ifMatch === null) throw new HttpProblem(400, 'invalid', 'If-Match must be an ETag such as W/"3"');
      const store = storeFor(context, request);
      try {
        const updated = await store.update({ ...resource, id: pathId }, ifMatch === undefined ? {} : { ifMatchVersion: ifMatch });
        reply.header('content-location', versionLocation(request, updated));
        return respond(request, reply, 200, updated);
      } catch (error) {
        // DESIGN.md: for Patient, PUT with a body without id creates a patient when the site's
        // policy permits (update as create, http.html#upsert), with an id of the service.
        const mayCreate =
          definition.putWithoutIdCreates && bodyId === undefined && ifMatch === undefined && siteOf(request).policies.patientPutCreates;
        if (!isDomainError(error, 'not-found')) throw error;
        // If-Match: * of a resource that does not exist is a false precondition (RFC 9110 13.1.1).
        if (ifMatch === '*') throw new HttpProblem(412, 'precondition-failed', `If-Match: * but ${type}/${pathId} does not exist`);
        if (!mayCreate) throw updateCreateRefused(type, pathId);
        const created = await store.create(resource);
        reply.header('location', versionLocation(request, created));
        return respond(request, reply, 201, created);
      }
    },
  );
}

function resourceFrom(request: FastifyRequest, type: string): Resource {
  assertJsonBody(request);
  return localizeReferences(checkedResource(request.body, type), baseUrl(request));
}

/** Prefer: return=… (http.html#ops): the resource (default), nothing, or an OperationOutcome. */
function respond(request: FastifyRequest, reply: FastifyReply, status: number, resource: Resource): FastifyReply {
  const wanted = preference(request, 'return');
  if (wanted === 'minimal') {
    versionHeaders(reply, resource);
    // No body, so no Content-Type: clients that parse any body they are given find none.
    return reply.code(status).send();
  }
  if (wanted === 'operationoutcome') {
    versionHeaders(reply, resource);
    return sendJson(
      reply,
      status,
      informationOutcome([{ severity: 'information', code: 'informational', diagnostics: `${resource.resourceType}/${resource.id} version ${resource.meta?.versionId} stored` }]),
    );
  }
  return sendResource(reply, status, resource);
}
