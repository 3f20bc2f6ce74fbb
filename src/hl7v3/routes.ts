import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mapError } from '../platform/http/error-mapping.ts';
import { siteContextOf } from '../platform/http/site-context.ts';
import type { Services } from '../platform/services.ts';
import { renderHl7v3Error } from './http-errors.ts';
import { processHl7v3Message } from './intake/process-message.ts';
import { hl7v3MediaTypes } from './media-types.ts';
import { defaultXmlLimits } from './xml/parse.ts';

export { renderHl7v3Error } from './http-errors.ts';
export { hl7v3MediaTypes } from './media-types.ts';

const ackSchema = {
  type: 'string',
  description: 'MCCI_IN000002UV01 acknowledgement (HL7 v3 XML)',
  example: '<MCCI_IN000002UV01 xmlns="urn:hl7-org:v3" ITSVersion="XML_1.0">…<acknowledgement><typeCode code="AA"/>…</acknowledgement></MCCI_IN000002UV01>',
};
const xmlResponse = (description: string) => ({ description, content: Object.fromEntries(hl7v3MediaTypes.slice(0, 1).map((type) => [type, { schema: ackSchema }])) });

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
    scope.addContentTypeParser([...hl7v3MediaTypes], { parseAs: 'buffer', bodyLimit: defaultXmlLimits.maxBytes }, (_request, body, done) => {
      done(null, body);
    });

    scope.post('/v3/ingest', {
      bodyLimit: defaultXmlLimits.maxBytes,
      schema: {
        summary: 'Submit an HL7 v3 patient message (add, revise, merge)',
        description:
          'Accepts PRPA_IN201301UV02 (patient added), PRPA_IN201302UV02 (patient revised) and PRPA_IN201304UV02 (duplicates resolved: the prior id is merged into the surviving patient) as in IHE ITI-44, for the site of the API key. ' +
          'Answers with MCCI_IN000002UV01: AA (200) when applied, AE (422) with one acknowledgementDetail per problem, AE (400) for a body that is not well-formed XML or not HL7 v3, AR (400) for an unsupported interaction, AR (503) when the sender must retry. ' +
          'A message id already received from the same sender gets the original acknowledgement again and changes nothing. Documents with a DOCTYPE are refused.',
        tags: ['HL7 v3'],
        consumes: [...hl7v3MediaTypes],
        produces: ['application/xml'],
        body: { type: 'string', description: 'HL7 v3 XML message (UTF-8 unless declared otherwise; at most 1 MiB)' },
        response: {
          200: xmlResponse('AA: the message was applied'),
          400: xmlResponse('AE: not well-formed XML or not an HL7 v3 message; AR: unsupported interaction'),
          401: xmlResponse('AR: missing or invalid X-API-Key'),
          413: xmlResponse('AE: the body is larger than 1 MiB'),
          415: xmlResponse('AE: the Content-Type is not an XML media type'),
          422: xmlResponse('AE: the message has errors; nothing was stored'),
          503: xmlResponse('AR: the service cannot store the message right now; retry later'),
        },
      },
      // The body is raw XML: the schema above documents it, the parser validates it.
      validatorCompiler: () => () => true,
      errorHandler: (error, request, reply) => sendTransportError(error, request, reply),
      handler: async (request, reply) => {
        const site = siteContextOf(request);
        const result = await processHl7v3Message(services.database, site, (request.body as Buffer | undefined) ?? Buffer.alloc(0), {
          ...charsetOf(request.headers['content-type']),
          remoteAddress: request.ip,
          logger: request.log,
        });
        request.log.info({ ack: result.typeCode, duplicate: result.duplicate, status: result.statusCode }, 'HL7 v3 message acknowledged');
        if (result.statusCode === 503) reply.header('retry-after', '5');
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
  if (mapped.unexpected) request.log.error({ err: error }, 'unexpected error');
  const rendered = renderHl7v3Error({ statusCode: mapped.statusCode, code: mapped.code, message: mapped.message, requestId: request.id, url: request.url });
  for (const [name, value] of Object.entries(mapped.headers ?? {})) reply.header(name, value);
  return reply.code(mapped.statusCode as 400).type(rendered.contentType).send(rendered.body);
}
