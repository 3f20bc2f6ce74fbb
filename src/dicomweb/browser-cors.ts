/**
 * CORS (Fetch standard, section 3.2) for the admin app's image viewer, which reads this origin
 * from the admin origin with a bearer token. Only the configured origins (CG_DICOMWEB_CORS_ORIGINS,
 * by default the admin origin's own address) get CORS headers; any other origin gets none, so its
 * page cannot read an answer. Never credentials mode: the token travels in a header, no cookie.
 * Read methods only: a browser page has no business storing through STOW-RS.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { dicomwebCorsOrigins, type GatewayConfig } from '../config/env.ts';

const allowedRequestHeaders = ['authorization', 'accept'];
const exposedResponseHeaders = ['content-type', 'content-length', 'x-request-id', 'warning'];

export async function registerBrowserCors(app: FastifyInstance, config: GatewayConfig): Promise<void> {
  await app.register(cors, {
    // Read at each request: the admin origin's address is known only once it listens when it
    // was started on a free port.
    origin: (origin, callback) => {
      if (origin === undefined) return callback(null, false);
      callback(null, dicomwebCorsOrigins(config).includes(origin.toLowerCase()) ? origin : false);
    },
    credentials: false,
    methods: ['GET', 'HEAD'],
    allowedHeaders: allowedRequestHeaders,
    exposedHeaders: exposedResponseHeaders,
    maxAge: 600,
    strictPreflight: true,
  });
}
