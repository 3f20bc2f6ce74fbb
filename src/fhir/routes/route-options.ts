import type { FastifySchema, RouteShorthandOptions } from 'fastify';
import { assertAcceptable } from '../http/content-negotiation.ts';

/** Largest create/update body: a DocumentReference may carry its attachment inline. */
export const maxResourceBytes = 4 * 1024 * 1024;

/**
 * Options of every FHIR route. The schema documents the route in the origin's OpenAPI document;
 * requests are checked by the FHIR code itself (repeated search parameters are legal, and bodies
 * are validated against the R4 StructureDefinitions), so the schema validator is switched off.
 */
export function fhirRoute(schema: FastifySchema, options: { public?: boolean; bodyLimit?: number } = {}): RouteShorthandOptions {
  return {
    schema,
    validatorCompiler: () => () => true,
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.public ? { config: { public: true } } : {}),
    preHandler: async (request) => assertAcceptable(request),
  };
}

export const idParams = {
  type: 'object',
  properties: { id: { type: 'string', description: 'The logical id (a UUID assigned by the service)' } },
  required: ['id'],
} as const;

const outcomeSchema = {
  description: 'OperationOutcome',
  type: 'object',
  properties: { resourceType: { type: 'string', enum: ['OperationOutcome'] }, issue: { type: 'array' } },
  additionalProperties: true,
} as const;

/** Response documentation: the resource (or Bundle) and the OperationOutcome of failures. */
export function resourceResponses(what: string, status: number): Record<string, unknown> {
  return {
    [status]: { description: `${what} (application/fhir+json)`, type: 'object', additionalProperties: true },
    '4xx': outcomeSchema,
    '5xx': outcomeSchema,
  };
}

export const resourceBody = (type: string) => ({
  type: 'object',
  description: `A ${type} resource (application/fhir+json or application/json)`,
  properties: { resourceType: { type: 'string', enum: [type] } },
  required: ['resourceType'],
  additionalProperties: true,
});

/** search.html#errors, as this server applies it (parse-search.ts). */
export const unsupportedParameterPolicy =
  'A parameter the server does not apply (unknown, a modifier, a chain, an unsupported result parameter or value) is refused ' +
  'with 400 and an OperationOutcome naming it and listing the supported ones. With Prefer: handling=lenient it is ignored ' +
  'instead, reported in an OperationOutcome entry, and left out of the self link.';

export const handlingHeader = {
  type: 'object',
  properties: {
    prefer: { type: 'string', description: 'handling=strict (the default: unsupported parameters are refused) or handling=lenient (they are ignored and reported)' },
  },
};

export const unsupportedParameterResponse = {
  ...outcomeSchema,
  description: 'OperationOutcome: an unsupported parameter (one issue each, code not-supported, listing the supported ones) or a bad value (code invalid)',
};
