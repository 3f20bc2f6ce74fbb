/**
 * A short-lived, read-only DICOMweb token for the image viewer (docs/architecture/imaging.md,
 * "Images in the browser"): the study page asks for one, then reads the DICOMweb origin directly
 * with `Authorization: Bearer`, as the signed-in user and for this site only. Any role that sees
 * the site's worklist may view its images.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { issueViewingToken } from '../../domain/imaging/viewing-tokens.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { dicomwebOriginFor } from '../dicomweb-origin.ts';
import { sessionOf } from '../session/authenticate.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const viewingTokenSchema = {
  type: 'object',
  properties: {
    token: { type: 'string', description: 'Send as Authorization: Bearer <token> to the DICOMweb origin (GET and HEAD only)' },
    expires_at: { type: 'string', format: 'date-time' },
    dicomweb_url: { type: 'string', description: 'The DICOMweb origin as the browser reaches it' },
  },
} as const;

export async function registerViewingTokenRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database, config } = services;
  app.post(
    '/api/sites/:siteId/dicomweb-tokens',
    {
      schema: {
        summary: 'A read-only DICOMweb token for the image viewer',
        description:
          'Valid for QIDO-RS and WADO-RS of this site on the DICOMweb origin for a few minutes, as the signed-in user; ' +
          'revoked when the session ends. 404 when this service does not serve the DICOMweb origin.',
        tags: ['imaging'],
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        response: { 201: viewingTokenSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string } }>, reply) => {
      const { site } = await siteForArea(database, request, request.params.siteId, 'worklist');
      const dicomwebUrl = dicomwebOriginFor(config, request);
      // Not a failure of the service but a part it was configured without: nothing to hand out.
      if (!dicomwebUrl) throw new HttpProblem(404, 'not-found', 'this service does not serve the DICOMweb origin (CG_DICOMWEB_PORT is blank), so its images cannot be viewed here');
      const session = sessionOf(request);
      const issued = await issueViewingToken(database, { sessionIdHash: session.idHash, userId: session.user.id, siteId: site.id });
      return reply.code(201).send({ token: issued.token, expires_at: issued.expiresAt.toISOString(), dicomweb_url: dicomwebUrl });
    },
  );
}
