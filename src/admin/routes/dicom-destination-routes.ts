/** A site's C-MOVE destinations: list, register, remove (docs/imaging.md, "DICOM destinations"). */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createDicomDestination, deleteDicomDestination, listDicomDestinations, type DicomDestination } from '../../domain/imaging/dicom-destinations.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const tags = ['dicom destinations'];
const siteParams = { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } } as const;
const destinationSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, ae_title: { type: 'string' }, host: { type: 'string' }, port: { type: 'integer' }, created_at: { type: 'string', format: 'date-time' } },
} as const;

function view(destination: DicomDestination) {
  return { id: destination.id, ae_title: destination.aeTitle, host: destination.host, port: destination.port, created_at: destination.createdAt.toISOString() };
}

export async function registerDicomDestinationRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/dicom-destinations',
    { schema: { summary: "The site's C-MOVE destinations", tags, params: siteParams, response: { 200: { type: 'object', properties: { destinations: { type: 'array', items: destinationSchema } } }, ...errorResponses } } },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'connectivity');
      return { destinations: (await listDicomDestinations(database, context)).map(view) };
    },
  );

  app.post(
    '/api/sites/:siteId/dicom-destinations',
    {
      schema: {
        summary: 'Register a C-MOVE destination (AE title, host, port)',
        tags,
        params: siteParams,
        body: {
          type: 'object',
          required: ['ae_title', 'host', 'port'],
          additionalProperties: false,
          properties: { ae_title: { type: 'string', maxLength: 64 }, host: { type: 'string', maxLength: 253 }, port: { type: ['integer', 'string'], maxLength: 5 } },
        },
        response: { 201: destinationSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Body: { ae_title: string; host: string; port: number | string } }>, reply) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'connectivity');
      const destination = await database.transaction((tx) => createDicomDestination(tx, context, { aeTitle: request.body.ae_title, host: request.body.host, port: request.body.port }));
      return reply.code(201).send(view(destination));
    },
  );

  app.delete(
    '/api/sites/:siteId/dicom-destinations/:destinationId',
    {
      schema: {
        summary: 'Remove a C-MOVE destination',
        tags,
        params: { type: 'object', required: ['siteId', 'destinationId'], properties: { siteId: uuidParam, destinationId: { type: 'string', format: 'uuid' } } },
        response: { 200: destinationSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; destinationId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'connectivity');
      return view(await database.transaction((tx) => deleteDicomDestination(tx, context, request.params.destinationId)));
    },
  );
}
