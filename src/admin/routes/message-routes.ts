/** The site's HL7 message log: type, control id, ACK code, problems, and each raw message. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getMessage, listMessages, type LoggedMessageSummary } from '../../domain/messages/message-log.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { auditAdminView } from '../data-access-audit.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, messageSummarySchema, uuidParam } from './schemas.ts';

const tags = ['messages'];

function summaryView(message: LoggedMessageSummary) {
  return {
    id: message.id,
    protocol: message.protocol,
    transport: message.transport,
    sending_application: message.sendingApplication,
    sending_facility: message.sendingFacility,
    control_id: message.controlId,
    message_type: message.messageType,
    outcome: message.outcome,
    ack_code: message.ackCode,
    problems: message.problems,
    remote_address: message.remoteAddress,
    received_at: message.receivedAt,
  };
}

/**
 * Raw bytes as text for reading: UTF-8 when they are valid UTF-8, else Latin-1 (HL7 8859/1), so
 * no byte is dropped; segment terminators (CR) become line breaks for display.
 */
export function displayRaw(raw: Buffer): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    text = raw.toString('latin1');
  }
  return text.replace(/\r\n?/g, '\n');
}

export async function registerMessageRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/messages',
    {
      schema: {
        summary: 'The site\'s HL7 message log, newest first',
        tags,
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 }, before: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'next_before of the previous page' } },
        },
        response: { 200: { type: 'object', properties: { messages: { type: 'array', items: messageSummarySchema }, next_before: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: { limit?: number; before?: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const page = await listMessages(database, context, { limit: request.query.limit ?? 50, ...(request.query.before ? { before: request.query.before } : {}) });
      auditAdminView(database, request, context.siteId, { interaction: 'search', resourceType: 'Message', resourceIds: page.messages.map((message) => message.id), patientIds: [] });
      return { messages: page.messages.map(summaryView), ...(page.nextBefore ? { next_before: page.nextBefore } : {}) };
    },
  );

  app.get(
    '/api/sites/:siteId/messages/:messageId',
    {
      schema: {
        summary: 'One message with its raw text and the acknowledgement sent',
        tags,
        params: { type: 'object', required: ['siteId', 'messageId'], properties: { siteId: uuidParam, messageId: uuidParam } },
        response: {
          200: {
            type: 'object',
            properties: {
              ...messageSummarySchema.properties,
              raw: { type: ['string', 'null'], description: 'null once the site\'s message body retention purged it' },
              raw_size: { type: 'integer' },
              body_purged_at: { type: ['string', 'null'], format: 'date-time' },
              ack: { type: 'string' },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; messageId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const message = await getMessage(database, context, request.params.messageId);
      if (!message) throw new HttpProblem(404, 'not-found', 'no such message in this site');
      auditAdminView(database, request, context.siteId, { interaction: 'view', resourceType: 'Message', resourceIds: [message.id], patientIds: [] });
      return {
        ...summaryView(message),
        raw: message.raw ? displayRaw(message.raw) : null,
        raw_size: message.raw?.length ?? 0,
        body_purged_at: message.bodyPurgedAt,
        ack: displayRaw(Buffer.from(message.ackText, 'utf8')) };
    },
  );
}
