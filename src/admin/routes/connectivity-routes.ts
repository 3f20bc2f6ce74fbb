/**
 * What a modality needs to send to this site: the DICOM listener's public address (the same
 * values GET /connectivity/dimse returns on the connectivity origin) and the site's AE title,
 * which selects the site as the called AE title (PS3.8 9.3.2).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, uuidParam } from './schemas.ts';

export async function registerConnectivityRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database, config } = services;
  app.get(
    '/api/sites/:siteId/connectivity',
    {
      schema: {
        summary: 'DICOM connection settings for the site\'s modalities',
        tags: ['connectivity'],
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        response: {
          200: {
            type: 'object',
            properties: {
              dicom: {
                type: 'object',
                properties: { host: { type: 'string' }, port: { type: 'integer' }, ip: { type: 'string' }, called_ae_title: { type: 'string' }, listening: { type: 'boolean' } },
              },
              mllp: { type: 'object', properties: { port: { type: 'integer' }, listening: { type: 'boolean' } } },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'connectivity');
      const { host, port, ip } = config.dicomPublic;
      return {
        dicom: { host, port, ...(ip ? { ip } : {}), called_ae_title: site.aeTitle, listening: config.ports.dicom !== undefined },
        // HL7 v2 senders connect to the same host on the MLLP port (issue 3); they are admitted by
        // their registered integration client, not by a title.
        mllp: { port: config.ports.mllp ?? 0, listening: config.ports.mllp !== undefined },
      };
    },
  );
}
