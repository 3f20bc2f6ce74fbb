/** A site's HL7 traffic at a glance (src/domain/messages/message-activity.ts), for the activity dashboard. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { siteActivity, type ActivityCounts } from '../../domain/messages/message-activity.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const int = { type: 'integer' } as const;
const countsSchema = { type: 'object', properties: { received: int, accepted: int, errored: int, refused: int } } as const;
const instant = { type: 'string', format: 'date-time' } as const;

function countsView(counts: ActivityCounts) {
  return { received: counts.received, accepted: counts.accepted, errored: counts.errored, refused: counts.refused };
}

export async function registerActivityRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database } = services;
  app.get(
    '/api/sites/:siteId/activity',
    {
      schema: {
        summary: 'Received, accepted, errored and refused HL7 messages of the last hour and day, per sender, and a five-minute series',
        tags: ['messages'],
        params: { type: 'object', required: ['siteId'], properties: { siteId: uuidParam } },
        response: {
          200: {
            type: 'object',
            properties: {
              generated_at: instant,
              last_hour: countsSchema,
              last_day: countsSchema,
              last_message_at: { type: ['string', 'null'], format: 'date-time' },
              refused_traffic_last_day: int,
              senders: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { transport: { type: 'string' }, sending_application: { type: 'string' }, sending_facility: { type: 'string' }, last_hour: countsSchema, last_day: countsSchema, last_message_at: instant },
                },
              },
              series: { type: 'array', items: { type: 'object', properties: { at: instant, received: int, errored: int } } },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const activity = await siteActivity(database, context);
      return {
        generated_at: activity.generatedAt,
        last_hour: countsView(activity.lastHour),
        last_day: countsView(activity.lastDay),
        last_message_at: activity.lastMessageAt,
        refused_traffic_last_day: activity.refusedTrafficLastDay,
        senders: activity.senders.map((sender) => ({
          transport: sender.transport,
          sending_application: sender.sendingApplication,
          sending_facility: sender.sendingFacility,
          last_hour: countsView(sender.lastHour),
          last_day: countsView(sender.lastDay),
          last_message_at: sender.lastMessageAt,
        })),
        series: activity.series,
      };
    },
  );
}
