import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config/env.ts';
import { dicomwebOriginFor } from './dicomweb-origin.ts';

/**
 * Browser hardening for the app and its API (OWASP HTTP Headers Cheat Sheet). The documentation
 * pages set their own policy (Swagger UI's), so they are left alone.
 *
 * The image viewer (Cornerstone3D) adds three grants, each as narrow as it can be:
 * - connect-src and img-src name the DICOMweb origin, which the viewer reads with a bearer token
 *   (thumbnails arrive through fetch and are shown as blob: URLs);
 * - script-src 'wasm-unsafe-eval' lets the image decoders compile their WebAssembly; it allows no
 *   JavaScript eval, and every script and module still comes from this origin;
 * - worker-src 'self' blob: runs the decoders in web workers loaded from this origin.
 */
function contentSecurityPolicy(dicomwebOrigin: string | undefined): string {
  const dicomweb = dicomwebOrigin ? ` ${dicomwebOrigin}` : '';
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "style-src 'self'",
    `img-src 'self' data: blob:${dicomweb}`,
    `connect-src 'self'${dicomweb}`,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function installSecurityHeaders(app: FastifyInstance, config: GatewayConfig): void {
  const tls = config.tls !== undefined;
  // The policy depends on the host the browser used only when no public DICOMweb URL is set.
  const fixedPolicy = config.dicomwebPublicUrl ? contentSecurityPolicy(config.dicomwebPublicUrl) : undefined;
  const policyFor = (request: FastifyRequest) => fixedPolicy ?? contentSecurityPolicy(dicomwebOriginFor(config, request));
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/api/documentation')) return payload;
    reply.header('content-security-policy', policyFor(request));
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
    if (tls) reply.header('strict-transport-security', 'max-age=31536000');
    if (request.url.startsWith('/api/') && !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
}
