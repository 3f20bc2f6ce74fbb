/** A site's HL7 traffic at a glance (src/domain/messages/message-activity.ts), for the activity dashboard. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { aeTitleActivity, clientActivity, countedSeries, keyActivity, lastErrorAt, type AeCounts } from '../../domain/activity/sender-activity.ts';
import { siteActivity, type ActivityCounts } from '../../domain/messages/message-activity.ts';
import { serviceHealth } from '../../platform/service-health.ts';
import type { Services } from '../../platform/services.ts';
import { siteForArea } from '../access.ts';
import { activitySenderSchemas, healthSchema } from './activity-schemas.ts';
import { errorResponses, uuidParam } from './schemas.ts';

const int = { type: 'integer' } as const;
const countsSchema = { type: 'object', properties: { received: int, accepted: int, errored: int, refused: int } } as const;
const instant = { type: 'string', format: 'date-time' } as const;

function countsView(counts: ActivityCounts) {
  return { received: counts.received, accepted: counts.accepted, errored: counts.errored, refused: counts.refused };
}

function aeCountsView(counts: AeCounts) {
  return { associations: counts.associations, associations_rejected: counts.associationsRejected, instances_stored: counts.instancesStored, instances_failed: counts.instancesFailed };
}

export async function registerActivityRoutes(app: FastifyInstance, services: Services): Promise<void> {
  const { database, config } = services;
  app.get(
    '/api/sites/:siteId/activity',
    {
      schema: {
        summary: 'Received, accepted, errored and refused HL7 messages of the last hour and day, per sender of every kind, a five-minute series and the service\'s health',
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
              series: {
                type: 'array',
                items: { type: 'object', properties: { at: instant, received: int, errored: int, instances_stored: int, instances_failed: int, fhir_requests: int, fhir_errored: int } },
              },
              ...activitySenderSchemas,
              last_error_at: { type: ['string', 'null'], format: 'date-time' },
              health: healthSchema,
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request: FastifyRequest<{ Params: { siteId: string } }>) => {
      const { context } = await siteForArea(database, request, request.params.siteId, 'messages');
      const now = new Date();
      const [activity, clients, keys, aeTitles, counted, lastError, health] = await Promise.all([
        siteActivity(database, context, now),
        clientActivity(database, context, now),
        keyActivity(database, context, now),
        aeTitleActivity(database, context, now),
        countedSeries(database, context, now),
        lastErrorAt(database, context),
        serviceHealth(database, config),
      ]);
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
        series: activity.series.map((point) => {
          const more = counted.get(point.at);
          return { ...point, instances_stored: more?.instances.accepted ?? 0, instances_failed: more?.instances.errored ?? 0, fhir_requests: more ? more.fhirRequests.accepted + more.fhirRequests.errored : 0, fhir_errored: more?.fhirRequests.errored ?? 0 };
        }),
        integration_clients: clients.map((client) => ({
          client_id: client.clientId,
          name: client.name,
          last_hour: client.lastHour,
          last_day: client.lastDay,
          last_message_at: client.lastMessageAt,
        })),
        api_keys: keys.map((key) => ({
          key_id: key.keyId,
          prefix: key.prefix,
          label: key.label,
          surfaces: key.surfaces,
          last_hour: key.lastHour,
          last_day: key.lastDay,
          last_request_at: key.lastRequestAt,
          last_error_at: key.lastErrorAt,
        })),
        ae_titles: aeTitles.map((ae) => ({
          calling_ae_title: ae.callingAeTitle,
          last_hour: aeCountsView(ae.lastHour),
          last_day: aeCountsView(ae.lastDay),
          last_activity_at: ae.lastActivityAt,
        })),
        last_error_at: lastError,
        health: {
          ready: health.ready,
          answering_node: health.answeringNode,
          worker: health.worker,
          workers: health.workers,
          nodes: health.nodes.map((node) => ({ node_id: node.nodeId, lease: node.lease, started_at: node.startedAt, heartbeat_at: node.heartbeatAt, workers_up: node.workersUp })),
          disks: health.disks.map((disk) => ({ name: disk.name, free_bytes: disk.freeBytes, total_bytes: disk.totalBytes })),
        },
      };
    },
  );
}
