/** Response schemas of the activity dashboard's senders of every kind and of the service's health. */
const int = { type: 'integer' } as const;
const instant = { type: 'string', format: 'date-time' } as const;
const nullableInstant = { type: ['string', 'null'], format: 'date-time' } as const;
const nullableText = { type: ['string', 'null'] } as const;
const messageCounts = { type: 'object', properties: { received: int, accepted: int, errored: int } } as const;
const requestCounts = { type: 'object', properties: { accepted: int, errored: int } } as const;
const aeCounts = { type: 'object', properties: { associations: int, associations_rejected: int, instances_stored: int, instances_failed: int } } as const;

export const activitySenderSchemas = {
  integration_clients: {
    type: 'array',
    description: 'HL7 messages per integration client (MLLP) that delivered them; messages logged before clients were recorded are not counted here',
    items: { type: 'object', properties: { client_id: { type: 'string' }, name: nullableText, last_hour: messageCounts, last_day: messageCounts, last_message_at: instant } },
  },
  api_keys: {
    type: 'array',
    description: 'Requests per API key over FHIR, HL7 over HTTP, MPPS and DICOMweb; errored: answered 4xx or 5xx',
    items: {
      type: 'object',
      properties: {
        key_id: { type: 'string' },
        prefix: nullableText,
        label: nullableText,
        surfaces: { type: 'array', items: { type: 'string' } },
        last_hour: requestCounts,
        last_day: requestCounts,
        last_request_at: instant,
        last_error_at: nullableInstant,
      },
    },
  },
  ae_titles: {
    type: 'array',
    description: 'DICOM traffic per calling AE title: associations accepted and rejected, instances stored and failed',
    items: { type: 'object', properties: { calling_ae_title: { type: 'string' }, last_hour: aeCounts, last_day: aeCounts, last_activity_at: instant } },
  },
} as const;

export const healthSchema = {
  type: 'object',
  properties: {
    ready: { type: 'boolean', description: 'the database is reachable (as /readyz)' },
    answering_node: nullableText,
    worker: { type: ['integer', 'null'] },
    workers: int,
    nodes: {
      type: 'array',
      items: { type: 'object', properties: { node_id: { type: 'string' }, lease: { type: 'string', enum: ['live', 'expired'] }, started_at: instant, heartbeat_at: instant, workers_up: int } },
    },
    disks: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, free_bytes: int, total_bytes: int } } },
  },
} as const;
