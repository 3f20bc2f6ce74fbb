/**
 * The HL7 v2 parts of the HL7 origin (POST /v2/ingest) and the MLLP listener, for the
 * composition root: registerHl7v2Routes joins HL7 v3's routes in the one 'hl7' HTTP surface,
 * renderHl7v2Error renders that origin's errors for /v2 paths, and mllpListener is the TCP surface.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loadStructureDefinitions } from '../domain/records/validation.ts';
import { refusalOf } from '../platform/disk-space/disk-space-guard.ts';
import { mapError } from '../platform/http/error-mapping.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';
import { answerFor, batchAnswerFor, batchStatusFor, renderHl7v2Error, statusFor } from './http/answer.ts';
import { splitBatch } from './er7/batch.ts';
import { ingestBatchMessages } from './intake/batch-intake.ts';
import { supportedCharset } from './er7/charset.ts';
import { defaultMaxMessageBytes, ingestHl7v2 } from './intake/intake.ts';
import { startMllpListener } from './mllp/listener.ts';
import { requestLog } from '../platform/http/request-log.ts';

export { renderHl7v2Error } from './http/answer.ts';
export { startMllpListener } from './mllp/listener.ts';

/** text/plain is what most interface engines send; x-application/hl7-v2+er7 is HL7's own media type. */
export const hl7v2MediaTypes = ['text/plain', 'x-application/hl7-v2+er7', 'application/hl7-v2', 'application/x-hl7'] as const;

const problemSchema = {
  type: 'object',
  properties: {
    severity: { type: 'string', enum: ['error', 'warning', 'information'] },
    code: { type: 'integer', description: 'HL7 table 0357 error code (ERR-3)' },
    text: { type: 'string' },
    location: { type: 'string', description: 'segment[occurrence]-field.component, e.g. PID[1]-3.1' },
    message: { type: 'string' },
  },
};
const answerSchema = (description: string) => ({
  description,
  type: 'object',
  properties: {
    success: { type: 'boolean' },
    message_type: { type: ['string', 'null'], example: 'ADT^A01' },
    control_id: { type: ['string', 'null'] },
    ack_code: { type: ['string', 'null'], enum: ['AA', 'AE', 'AR', null] },
    ack: { type: ['string', 'null'], description: 'The HL7 v2 ACK (segments separated by CR)' },
    duplicate: { type: 'boolean', description: 'true when this MSH-10 was already processed; the original ACK is returned' },
    errors: { type: 'array', items: problemSchema },
    warnings: { type: 'array', items: problemSchema },
    messages: { type: 'array', items: { type: 'object' }, description: 'For a batch: each message\'s own answer (the fields above), in order' },
    request_id: { type: 'string' },
  },
});

export async function registerHl7v2Routes(app: FastifyInstance, services: Services): Promise<void> {
  // Load the FHIR definitions the record store validates with now, not during the first request.
  loadStructureDefinitions();
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser([...hl7v2MediaTypes], { parseAs: 'buffer', bodyLimit: defaultMaxMessageBytes }, (_request, body, done) => done(null, body));
    scope.post('/v2/ingest', {
      bodyLimit: defaultMaxMessageBytes,
      schema: {
        summary: 'Submit one HL7 v2.5.1 message (ER7), or a batch of them',
        description:
          'Accepts ADT^A01 to ADT^A08 (demographics and the visit of PV1-19: admit, transfer, discharge, register, pre-admit, change of patient class, update), ADT^A11, ADT^A12, ADT^A13 (cancel admit or visit, transfer, discharge: the visit of PV1-19 is corrected, nothing else), ADT^A28, ADT^A31 (demographics), ADT^A40 (merge MRG-1 into PID-3) and ORU^R01 (OBX results as Observations) for the site of the API key. ' +
          'Answers with JSON carrying the HL7 ACK: 200 AA when applied; 422 AE with every problem when nothing was stored; 400 when the body is not an HL7 v2 message or its type is not accepted (AR); 503 AR when the sender must retry. ' +
          'A control id (MSH-10) already processed for the same MSH-3/MSH-4 gets the original ACK and changes nothing. Segments may end in CR, LF or CRLF; MSH-18 selects the charset, else the Content-Type charset, else UTF-8. ' +
          'A batch (FHS/BHS ... BTS/FTS) or several messages one after the other are taken one by one, each as if sent alone; the answer carries the batch of ACKs and each message\'s answer in `messages`: 200 when all are AA, 503 when one is to be sent again (the ones after it are not applied), else 422.',
        tags: ['HL7 v2'],
        consumes: [...hl7v2MediaTypes],
        body: { type: 'string', description: 'One HL7 v2 message in ER7, or a batch (at most 1 MiB in all)' },
        response: {
          200: answerSchema('AA: the message was applied'),
          400: answerSchema('not an HL7 v2 message, or AR: message type or event not accepted'),
          401: answerSchema('missing or invalid X-API-Key'),
          413: answerSchema('the body is larger than 1 MiB'),
          415: answerSchema('the Content-Type is not text/plain or x-application/hl7-v2+er7'),
          422: answerSchema('AE: the message has errors; nothing was stored'),
          503: answerSchema('AR: the database is unavailable; send the message again later'),
        },
      },
      validatorCompiler: () => () => true,
      errorHandler: (error, request, reply) => sendTransportError(error, request, reply),
      handler: async (request, reply) => {
        const site = siteContextOf(request);
        const log = requestLog(request);
        const body = (request.body as Buffer | undefined) ?? Buffer.alloc(0);
        const ingest = (raw: Uint8Array, halted?: Error) => {
          const refusal = halted ?? refusalOf(services).refusal;
          return ingestHl7v2(
            services.database,
            {
              raw,
              site,
              defaultCharset: charsetOf(request.headers['content-type']),
              origin: { transport: 'http', remoteAddress: request.ip, ...(site.actor.kind === 'api-key' ? { credentialId: site.actor.keyId } : {}) },
              ...(refusal ? { refusal } : {}),
            },
            log,
          );
        };
        const split = splitBatch(body);
        if (split) {
          const batch = await ingestBatchMessages(split, ingest);
          const outcomes = batch.answers.flat();
          for (const outcome of outcomes) services.metrics?.hl7v2Message('http', outcome.messageType, outcome.ackCode);
          log.info({ messages: outcomes.length, acks: outcomes.map((o) => o.ackCode) }, 'HL7 v2 batch acknowledged');
          if (batch.retry) reply.header('retry-after', '5');
          const controlId = split.fhs?.fields[11] ?? split.batches[0]?.bhs?.fields[11] ?? null;
          return reply
            .code(batchStatusFor(outcomes, batch.retry) as 200)
            .type('application/json; charset=utf-8')
            .send(JSON.stringify(batchAnswerFor(outcomes, batch.ack, split.notes, controlId || null)));
        }
        const outcome = await ingest(body);
        log.info({ messageType: outcome.messageType, controlId: outcome.controlId, ack: outcome.ackCode, duplicate: outcome.duplicate }, 'HL7 v2 message acknowledged');
        services.metrics?.hl7v2Message('http', outcome.messageType, outcome.ackCode);
        if (outcome.retry) reply.header('retry-after', '5');
        return reply.code(statusFor(outcome) as 200).type('application/json; charset=utf-8').send(JSON.stringify(answerFor(outcome)));
      },
    });
  });
}

function charsetOf(contentType: string | undefined) {
  const declared = /;\s*charset\s*=\s*"?([^";]+)"?/i.exec(contentType ?? '')?.[1];
  return (declared ? supportedCharset(declared) : undefined) ?? 'UNICODE UTF-8';
}

function sendTransportError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = mapError(error);
  if (mapped.unexpected) request.log.error({ err: error, reqId: request.id }, 'unexpected error');
  const message = mapped.statusCode === 415 ? `the Content-Type must be one of ${hl7v2MediaTypes.join(', ')}` : mapped.message;
  const rendered = renderHl7v2Error({ statusCode: mapped.statusCode, code: mapped.code, message, requestId: request.id, url: request.url });
  for (const [name, value] of Object.entries(mapped.headers ?? {})) reply.header(name, value);
  return reply.code(mapped.statusCode as 400).type(rendered.contentType).send(JSON.stringify(rendered.body));
}

/** An 'hl7' surface with only the v2 route (for tests and deployments without HL7 v3). */
export const hl7v2OnlySurface: HttpSurface = {
  name: 'hl7',
  title: 'Clinical Gateway HL7 intake',
  description: 'HL7 v2.5.1 messages over HTTP',
  auth: 'api-key',
  renderError: renderHl7v2Error,
  register: registerHl7v2Routes,
};

/** The MLLP listener as the composition root starts it. */
export const mllpListener = { name: 'mllp' as const, start: startMllpListener };
