import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { refusalOf } from '../platform/disk-space/disk-space-guard.ts';
import { mapError } from '../platform/http/error-mapping.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';
import { renderHl7v3Error } from './http-errors.ts';
import { processHl7v3Message } from './intake/process-message.ts';
import { acceptedMediaTypes, isSoapContentType, soapMediaType } from './media-types.ts';
import { wrapInSoap } from './soap/soap-envelope.ts';
import { defaultXmlLimits } from './xml/parse.ts';
import { requestLog } from '../platform/http/request-log.ts';

export { renderHl7v3Error } from './http-errors.ts';
export { acceptedMediaTypes, hl7v3MediaTypes } from './media-types.ts';

const ackSchema = {
  type: 'string',
  description: 'MCCI_IN000002UV01 acknowledgement (HL7 v3 XML)',
  example: '<MCCI_IN000002UV01 xmlns="urn:hl7-org:v3" ITSVersion="XML_1.0">…<acknowledgement><typeCode code="AA"/>…</acknowledgement></MCCI_IN000002UV01>',
};
const xmlResponse = (description: string) => ({
  description,
  content: { 'application/xml': { schema: ackSchema }, [soapMediaType]: { schema: { ...ackSchema, description: 'the same acknowledgement in a SOAP 1.2 Body' } } },
});

/**
 * POST /v3/ingest on the HL7 origin: HL7 v3 patient feed messages (IHE ITI-44: PRPA_IN201301UV02
 * add, PRPA_IN201302UV02 revise, PRPA_IN201304UV02 duplicates resolved), answered with an
 * MCCI_IN000002UV01 acknowledgement. Every answer of this route, errors included, is an
 * acknowledgement in XML, so an HL7 v3 sender never has to read another format.
 */
export async function registerHl7v3Routes(app: FastifyInstance, services: Services): Promise<void> {
  // An encapsulated scope: the XML parsers below serve this route only, and nothing else
  // (text/plain, JSON) is accepted here.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser([...acceptedMediaTypes], { parseAs: 'buffer', bodyLimit: defaultXmlLimits.maxBytes }, (_request, body, done) => {
      done(null, body);
    });

    scope.post('/v3/ingest', {
      bodyLimit: defaultXmlLimits.maxBytes,
      schema: {
        summary: 'Submit an HL7 v3 patient message (add, revise, merge)',
        description:
          'Accepts PRPA_IN201301UV02 (patient added), PRPA_IN201302UV02 (patient revised) and PRPA_IN201304UV02 (duplicates resolved: the prior id is merged into the surviving patient) as in IHE ITI-44, for the site of the API key. ' +
          'Answers with MCCI_IN000002UV01: AA (200) when applied, AE (422) with one acknowledgementDetail per problem, AE (400) for a body that is not well-formed XML or not HL7 v3, AR (400) for an unsupported interaction, AR (503) when the sender must retry. ' +
          'A message id already received from the same sender gets the original acknowledgement again and changes nothing. Documents with a DOCTYPE are refused. ' +
          'IHE web-services senders may post the message in a SOAP 1.2 envelope (application/soap+xml, WS-Addressing): the answer is the acknowledgement in a SOAP 1.2 envelope, HTTP 200 for every acknowledgement (its typeCode says AA, AE or AR), wsa:RelatesTo the request wsa:MessageID.',
        tags: ['HL7 v3'],
        consumes: [...acceptedMediaTypes],
        produces: ['application/xml', soapMediaType],
        body: { type: 'string', description: 'HL7 v3 XML message (UTF-8 unless declared otherwise; at most 1 MiB)' },
        response: {
          200: xmlResponse('AA: the message was applied'),
          400: xmlResponse('AE: not well-formed XML or not an HL7 v3 message; AR: unsupported interaction'),
          401: xmlResponse('AR: missing or invalid X-API-Key'),
          413: xmlResponse('AE: the body is larger than 1 MiB'),
          415: xmlResponse('AE: the Content-Type is not an XML or SOAP 1.2 media type'),
          422: xmlResponse('AE: the message has errors; nothing was stored'),
          503: xmlResponse('AR: the service cannot store the message right now; retry later'),
        },
      },
      // The body is raw XML: the schema above documents it, the parser validates it.
      validatorCompiler: () => () => true,
      errorHandler: (error, request, reply) => sendTransportError(error, request, reply),
      handler: async (request, reply) => {
        const site = siteContextOf(request);
        const log = requestLog(request);
        const result = await processHl7v3Message(services.database, site, (request.body as Buffer | undefined) ?? Buffer.alloc(0), {
          ...charsetOf(request.headers['content-type']),
          remoteAddress: request.ip,
          logger: log,
          ...refusalOf(services),
        });
        log.info({ ack: result.typeCode, duplicate: result.duplicate, status: result.statusCode }, 'HL7 v3 message acknowledged');
        services.metrics?.hl7v3Message((request.body as Buffer | undefined) ?? Buffer.alloc(0), result.typeCode);
        if (result.statusCode === 503) reply.header('retry-after', '5');
        if (result.soap || isSoapContentType(request.headers['content-type'])) {
          // SOAP 1.2 HTTP binding: a response that is not a SOAP fault is a 200; the MCCI typeCode
          // carries AE/AR. Statuses that ask for a retry or a different request are kept.
          const status = result.statusCode === 400 || result.statusCode === 422 ? 200 : result.statusCode;
          return reply.code(status as 200).type(`${soapMediaType}; charset=utf-8`).send(wrapInSoap(result.ackXml, result.soap?.relatesTo));
        }
        return reply.code(result.statusCode as 200).type('application/xml; charset=utf-8').send(result.ackXml);
      },
    });
  });
}

function charsetOf(contentType: string | undefined): { charset?: string } {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1];
  return charset ? { charset } : {};
}

/**
 * Errors raised around the handler (authentication, media type, body size, or a failure inside
 * it) as acknowledgements: the platform's error mapping decides the status, this renders it.
 */
function sendTransportError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const mapped = mapError(error);
  if (mapped.unexpected) request.log.error({ err: error, reqId: request.id }, 'unexpected error');
  const rendered = renderHl7v3Error({ statusCode: mapped.statusCode, code: mapped.code, message: mapped.message, requestId: request.id, url: request.url });
  for (const [name, value] of Object.entries(mapped.headers ?? {})) reply.header(name, value);
  if (isSoapContentType(request.headers['content-type'])) {
    return reply.code(mapped.statusCode as 400).type(`${soapMediaType}; charset=utf-8`).send(wrapInSoap(rendered.body as string, undefined));
  }
  return reply.code(mapped.statusCode as 400).type(rendered.contentType).send(rendered.body);
}
