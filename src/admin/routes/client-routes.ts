/** A site's integration clients (MLLP senders): list, create, edit, enable and disable. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createIntegrationClient, listIntegrationClients, updateIntegrationClient, type ClientInput, type OverlapApproval } from '../../domain/clients/integration-clients.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { sessionOf } from '../session/authenticate.ts';
import type { Services } from '../../platform/services.ts';
import { actorOf, siteForArea } from '../access.ts';
import { clientSchema, errorResponses, timeZoneField, uuidParam } from './schemas.ts';
import { clientJson } from '../../domain/clients/client-json.ts';

const tags = ['integration clients'];
const siteParams = { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } } as const;
const clientFields = {
  name: { type: 'string', maxLength: 200 },
  protocol: { type: 'string', maxLength: 40, description: 'hl7-mllp' },
  allowed_ips: {
    description: 'IPv4/IPv6 addresses, CIDR ranges, or * where the site policy permits; a list or a comma-separated string',
    anyOf: [{ type: 'array', maxItems: 200, items: { type: 'string', maxLength: 64 } }, { type: 'string', maxLength: 8000 }],
  },
  sending_application: { type: ['string', 'null'], maxLength: 200, description: 'MSH-3 must equal this when set' },
  sending_facility: { type: ['string', 'null'], maxLength: 200, description: 'MSH-4 must equal this when set' },
  default_charset: { type: 'string', maxLength: 40, description: 'ASCII, 8859/1 or UNICODE UTF-8: used when MSH-18 is empty' },
  time_zone: timeZoneField('this sender; null or blank: the site\'s applies'),
  enabled: { type: 'boolean' },
  approve_overlap: { type: 'boolean', description: 'service admin only: register even though another site\'s client could match the same messages' },
} as const;

interface ClientBody {
  name?: string;
  protocol?: string;
  allowed_ips?: string | string[];
  sending_application?: string | null;
  sending_facility?: string | null;
  default_charset?: string;
  time_zone?: string | null;
  enabled?: boolean;
  approve_overlap?: boolean;
}

function toInput(body: ClientBody): Partial<ClientInput> {
  return {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.protocol !== undefined ? { protocol: body.protocol } : {}),
    ...(body.allowed_ips !== undefined ? { allowedIps: splitList(body.allowed_ips) } : {}),
    ...(body.sending_application !== undefined ? { sendingApplication: body.sending_application } : {}),
    ...(body.sending_facility !== undefined ? { sendingFacility: body.sending_facility } : {}),
    ...(body.default_charset !== undefined ? { defaultCharset: body.default_charset } : {}),
    ...(body.time_zone !== undefined ? { timeZone: body.time_zone } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
  };
}

/** Only a service administrator approves a registration that overlaps another site's. */
function approvalOf(request: FastifyRequest<{ Body: ClientBody }>): OverlapApproval {
  if (request.body.approve_overlap !== true) return {};
  if (sessionOf(request).user.role !== 'service-admin') throw new HttpProblem(403, 'forbidden', 'only a service administrator approves a registration that overlaps another site\'s');
  return { approveOverlap: true };
}

/** Entries may also be separated by commas or whitespace inside one string. */
function splitList(value: string | string[]): string[] {
  return (Array.isArray(value) ? value : [value]).flatMap((entry) => entry.split(/[\s,]+/)).filter((entry) => entry !== '');
}

export async function registerClientRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/clients',
    { schema: { summary: 'The site\'s integration clients', tags, params: siteParams, response: { 200: { type: 'object', properties: { clients: { type: 'array', items: clientSchema } } }, ...errorResponses } } },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'clients');
      return { clients: (await listIntegrationClients(database, site.id)).map(clientJson) };
    },
  );

  app.post(
    '/api/sites/:siteId/clients',
    {
      schema: {
        summary: 'Register an integration client',
        tags,
        params: siteParams,
        body: { type: 'object', required: ['name', 'allowed_ips'], additionalProperties: false, properties: clientFields },
        response: { 201: clientSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Body: ClientBody & { name: string; allowed_ips: string | string[] } }>, reply) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'clients');
      const input = { protocol: 'hl7-mllp', ...toInput(request.body) } as ClientInput;
      const client = await database.transaction((tx) => createIntegrationClient(tx, site.id, input, actorOf(request), approvalOf(request)));
      return reply.code(201).send(clientJson(client));
    },
  );

  app.patch(
    '/api/sites/:siteId/clients/:clientId',
    {
      schema: {
        summary: 'Edit, enable or disable an integration client',
        tags,
        params: { type: 'object', required: ['siteId', 'clientId'], properties: { siteId: uuidParam, clientId: uuidParam } },
        body: { type: 'object', additionalProperties: false, properties: clientFields },
        response: { 200: clientSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; clientId: string }; Body: ClientBody }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'clients');
      const client = await database.transaction((tx) => updateIntegrationClient(tx, site.id, request.params.clientId, toInput(request.body), actorOf(request), approvalOf(request)));
      return clientJson(client);
    },
  );
}
