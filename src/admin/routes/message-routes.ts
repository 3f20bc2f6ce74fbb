/** The site's HL7 message log: search and filters, each raw message, and reprocessing a failed one. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getMessage, type LoggedMessageSummary } from '../../domain/messages/message-log.ts';
import { displayRaw } from '../../domain/messages/message-text.ts';
import { reprocessAttempts, reprocessMessage } from '../../domain/messages/message-reprocess.ts';
import { countBound, maxMessagePage, messageSorts, searchMessages, type MessageQuery } from '../../domain/messages/message-search.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';
import { auditAdminView } from '../data-access-audit.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, messageSummarySchema, uuidParam } from './schemas.ts';

const tags = ['messages'];

export function summaryView(message: LoggedMessageSummary) {
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
    patient_identifier: message.patientIdentifier,
    reprocess_of: message.reprocessOf,
    reprocessed_as: message.reprocessedAs,
  };
}

/** AA/AE/AR (and HL7 v3's CA/CE/CR) name the outcome an operator looks for; refused, the sender refused. */
const outcomeByAck = { AA: 'processed', AE: 'error', AR: 'rejected', refused: 'refused' } as const;

export interface MessageSearchQuery {
  limit?: number;
  after?: string;
  at?: string;
  from?: string;
  to?: string;
  sort?: (typeof messageSorts)[number];
  type?: string;
  outcome?: keyof typeof outcomeByAck;
  control_id?: string;
  patient?: string;
  sender?: string;
  transport?: 'http' | 'mllp';
  protocol?: 'hl7v2' | 'hl7v3';
}

const text = (description: string) => ({ type: 'string', minLength: 1, maxLength: 200, description }) as const;
const instant = (description: string) => ({ type: 'string', format: 'date-time', description }) as const;

export const messageSearchProperties = {
  limit: { type: 'integer', minimum: 1, maximum: maxMessagePage, default: 50 },
  after: { type: 'string', pattern: '^[0-9]{1,20}:[0-9]{1,18}$', description: 'the `next` cursor of the previous page' },
  at: instant('jump: start the page at this instant (at or before it, newest first; at or after it, oldest first)'),
  from: instant('received at or after'),
  to: instant('received before'),
  sort: { type: 'string', enum: [...messageSorts], default: 'newest' },
  type: text('message type, exactly (ADT^A01)'),
  outcome: { type: 'string', enum: Object.keys(outcomeByAck), description: 'AA accepted, AE error, AR rejected (HL7 v3 CA/CE/CR alike), refused: an MLLP sender whose MSH-3/MSH-4 matched no integration client' },
  control_id: text('MSH-10 (HL7 v3: message id), exactly'),
  patient: text('PID-3 patient identifier, exactly'),
  sender: text('MSH-3 or MSH-4, exactly'),
  transport: { type: 'string', enum: ['http', 'mllp'] },
  protocol: { type: 'string', enum: ['hl7v2', 'hl7v3'] },
} as const;

/** The domain query of the API's (and the CLI's) parameters, already validated by the schema. */
export function messageQueryOf(query: MessageSearchQuery): MessageQuery {
  return {
    limit: query.limit ?? 50,
    sort: query.sort ?? 'newest',
    ...(query.after ? { after: query.after } : {}),
    ...(query.at ? { at: new Date(query.at) } : {}),
    ...(query.from ? { from: new Date(query.from) } : {}),
    ...(query.to ? { to: new Date(query.to) } : {}),
    ...(query.type ? { messageType: query.type } : {}),
    ...(query.outcome ? { outcome: outcomeByAck[query.outcome] } : {}),
    ...(query.control_id ? { controlId: query.control_id } : {}),
    ...(query.patient ? { patientIdentifier: query.patient } : {}),
    ...(query.sender ? { sender: query.sender } : {}),
    ...(query.transport ? { transport: query.transport } : {}),
    ...(query.protocol ? { protocol: query.protocol } : {}),
  };
}

const detailSchema = {
  type: 'object',
  properties: {
    ...messageSummarySchema.properties,
    raw: { type: ['string', 'null'], description: 'null once the site\'s message body retention purged it' },
    raw_size: { type: 'integer' },
    body_purged_at: { type: ['string', 'null'], format: 'date-time' },
    ack: { type: 'string' },
    attempts: { type: 'array', items: messageSummarySchema },
  },
} as const;

export async function registerMessageRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;

  app.get(
    '/api/sites/:siteId/messages',
    {
      schema: {
        summary: 'Search the site\'s HL7 message log (filters, sort, keyset paging, a total exact up to 10,000)',
        tags,
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        querystring: { type: 'object', additionalProperties: false, properties: messageSearchProperties },
        response: {
          200: {
            type: 'object',
            properties: {
              messages: { type: 'array', items: messageSummarySchema },
              next: { type: 'string', description: 'pass as `after` for the following page' },
              total: { type: 'integer' },
              total_exact: { type: 'boolean', description: `false: more than ${countBound} messages match (total is ${countBound})` },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string }; Querystring: MessageSearchQuery }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const page = await searchMessages(database, context, messageQueryOf(request.query));
      auditAdminView(database, request, context.siteId, { interaction: 'search', resourceType: 'Message', resourceIds: page.messages.map((message) => message.id), patientIds: [] });
      return { messages: page.messages.map(summaryView), ...(page.next ? { next: page.next } : {}), total: page.total, total_exact: page.totalExact };
    },
  );

  app.get(
    '/api/sites/:siteId/messages/:messageId',
    {
      schema: {
        summary: 'One message with its raw text, the acknowledgement sent, and its reprocessed attempts',
        tags,
        params: { type: 'object', required: ['siteId', 'messageId'], properties: { siteId: uuidParam, messageId: uuidParam } },
        response: { 200: detailSchema, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; messageId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const message = await getMessage(database, context, request.params.messageId);
      if (!message) throw new HttpProblem(404, 'not-found', 'no such message in this site');
      const attempts = await reprocessAttempts(database, context, message.id);
      auditAdminView(database, request, context.siteId, { interaction: 'view', resourceType: 'Message', resourceIds: [message.id], patientIds: [] });
      return {
        ...summaryView(message),
        raw: message.raw ? displayRaw(message.raw) : null,
        raw_size: message.raw?.length ?? 0,
        body_purged_at: message.bodyPurgedAt,
        ack: displayRaw(Buffer.from(message.ackText, 'utf8')),
        attempts: attempts.map(summaryView),
      };
    },
  );

  app.post(
    '/api/sites/:siteId/messages/:messageId/reprocess',
    {
      schema: {
        summary: 'Run a failed (AE or AR) message through the intake again, with the configuration as it is now',
        description:
          'The attempt is logged beside the original with its own acknowledgement. 409 when the message was accepted, or already reprocessed and accepted; 422 when no integration client of the site admits its sender now.',
        tags,
        params: { type: 'object', required: ['siteId', 'messageId'], properties: { siteId: uuidParam, messageId: uuidParam } },
        response: { 200: { type: 'object', properties: { original: messageSummarySchema, attempt: messageSummarySchema } }, ...errorResponses },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string; messageId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      if (!services.messageRerun) throw new HttpProblem(503, 'unavailable', 'reprocessing is not available in this process');
      const result = await reprocessMessage(database, context, request.params.messageId, services.messageRerun);
      return { original: summaryView(result.original), attempt: summaryView(result.attempt) };
    },
  );
}
