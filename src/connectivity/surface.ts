/**
 * The connectivity lookup origin (issue 5 point 6): where a modality sends DICOM. It answers the
 * fleet-wide listener address from CG_DICOM_PUBLIC_HOST / _PORT / _IP, never an AE title: the
 * called AE title selects the site, so it is configured per site (administration app), and one
 * site's key must not learn another's.
 */
import type { FastifyInstance } from 'fastify';
import { renderJsonError, type HttpSurface } from '../platform/http/surface.ts';
import type { Services } from '../platform/services.ts';

const errorSchema = {
  type: 'object',
  properties: {
    error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, request_id: { type: 'string' } } },
  },
} as const;

export const dimseEndpointSchema = {
  type: 'object',
  required: ['host', 'port'],
  additionalProperties: false,
  properties: {
    host: { type: 'string', description: 'host name (or address) modalities connect to' },
    port: { type: 'integer', minimum: 1, maximum: 65535, description: 'TCP port of the DICOM listener' },
    ip: { type: 'string', description: 'IP address, for modalities that cannot resolve host names' },
  },
} as const;

export interface DimseEndpoint {
  host: string;
  port: number;
  ip?: string;
}

export const connectivitySurface: HttpSurface = {
  name: 'connectivity',
  title: 'Clinical Gateway connectivity lookup',
  description:
    "Where modalities send images: the DICOM listener's public address. Combine it with your site's AE title " +
    '(shown in the administration app) as the called AE title. Authenticate with X-API-Key.',
  auth: 'api-key',
  renderError: renderJsonError,
  async register(app: FastifyInstance, services: Services) {
    const { host, port, ip } = services.config.dicomPublic;
    // Built once: the answer depends only on configuration. Only these three fields, by construction.
    const endpoint: DimseEndpoint = { host, port, ...(ip ? { ip } : {}) };
    app.get(
      '/connectivity/dimse',
      {
        schema: {
          summary: 'DICOM listener address',
          description: 'The host, port and optional IP a modality uses to reach the DICOM C-STORE/MPPS listener.',
          tags: ['Connectivity'],
          security: [{ apiKey: [] }],
          response: {
            200: { description: 'The listener address', ...dimseEndpointSchema },
            401: { description: 'Missing, unknown or revoked API key', ...errorSchema },
          },
        },
      },
      async (_request, reply) => reply.header('cache-control', 'no-store').send(endpoint),
    );
  },
};
