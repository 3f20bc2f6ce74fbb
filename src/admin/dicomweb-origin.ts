/**
 * Where the browser reaches the DICOMweb origin, for the viewer's requests and the page's Content
 * Security Policy: CG_DICOMWEB_PUBLIC_URL when set (behind a load balancer or another host name),
 * otherwise the host the browser used for this origin with the DICOMweb port, which is right
 * whenever both origins are served by the same host, as `npm start` does.
 */
import type { FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config/env.ts';

export function dicomwebOriginFor(config: GatewayConfig, request: FastifyRequest): string | undefined {
  if (config.dicomwebPublicUrl) return config.dicomwebPublicUrl;
  const port = config.ports.dicomweb;
  if (port === undefined || port === 0) return undefined;
  const protocol = config.tls ? 'https' : request.protocol;
  return `${protocol}://${request.hostname}:${port}`;
}
