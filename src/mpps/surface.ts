/**
 * The MPPS intake origin: POST /ingest records a modality performed procedure step (PS3.4 annex F
 * semantics over JSON) for modalities and RIS bridges that cannot speak DIMSE N-CREATE/N-SET.
 * Same state machine as the DICOM listener's MPPS: src/domain/imaging/procedure-steps.ts.
 */
import type { FastifyInstance } from 'fastify';
import { recordProcedureStep } from '../domain/imaging/procedure-steps.ts';
import { isWriteMethod, refuseNewDataWhileDiskLow } from '../platform/disk-space/refuse-new-data.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';
import { parseIngestBody } from './ingest-body.ts';
import { renderMppsError } from './render-error.ts';
import { errorResponseSchema, ingestBodySchema, stepResponseSchema } from './schemas.ts';
import { stepToJson } from './step-json.ts';
import { requestLog } from '../platform/http/request-log.ts';

/** An MPPS update is a few hundred bytes; anything near this is not one. */
export const ingestBodyLimit = 64 * 1024;

export const mppsSurface: HttpSurface = {
  name: 'mpps',
  title: 'Clinical Gateway MPPS intake',
  description:
    'Records modality performed procedure steps (IN PROGRESS, then COMPLETED or DISCONTINUED) against studies of the ' +
    "API key's site, whether the study's images have arrived yet or not. Authenticate with X-API-Key.",
  auth: 'api-key',
  renderError: renderMppsError,
  async register(app: FastifyInstance, services: Services) {
    refuseNewDataWhileDiskLow(app, services, isWriteMethod);
    // JSON only: Fastify also parses text/plain by default, which would reach the handler as a
    // string; without the parser such a request is a 415, as it should be.
    app.removeContentTypeParser('text/plain');
    app.post(
      '/ingest',
      {
        bodyLimit: ingestBodyLimit,
        // The schema documents the body; parseIngestBody checks it, so that every refusal names its
        // field in the intake's own words rather than in JSON Schema's.
        validatorCompiler: () => () => true,
        schema: {
          summary: 'Record a modality performed procedure step',
          description:
            'Creates the step (201) or moves it along IN PROGRESS -> COMPLETED | DISCONTINUED (200). Re-sending the ' +
            'current state is idempotent (200). A COMPLETED or DISCONTINUED step never changes again (409).',
          tags: ['MPPS'],
          security: [{ apiKey: [] }],
          body: ingestBodySchema,
          response: {
            200: { description: 'The step was updated, or already in that state', ...stepResponseSchema },
            201: { description: 'The step was created', ...stepResponseSchema },
            400: { description: 'Invalid JSON or field', ...errorResponseSchema },
            401: { description: 'Missing, unknown or revoked API key', ...errorResponseSchema },
            409: { description: 'The step is final, or belongs to another study', ...errorResponseSchema },
            413: { description: 'Body larger than 64 KiB', ...errorResponseSchema },
            415: { description: 'Content-Type is not application/json', ...errorResponseSchema },
            503: { description: 'Database unavailable: retry later', ...errorResponseSchema },
          },
        },
      },
      async (request, reply) => {
        const input = parseIngestBody(request.body);
        const site = siteContextOf(request);
        // Answer only after the commit (DESIGN.md: durability).
        const result = await services.database.transaction((tx) => recordProcedureStep(tx, site, input));
        requestLog(request).info(
          { sopInstanceUid: input.sopInstanceUid, status: result.step.status, created: result.created, changed: result.changed },
          'procedure step recorded',
        );
        return reply.code(result.created ? 201 : 200).send(stepToJson(result.step));
      },
    );
  },
};
