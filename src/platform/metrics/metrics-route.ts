import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/http-problem.ts';
import type { Services } from '../services.ts';
import { scrapeText } from './cluster-scrape.ts';

/**
 * GET /metrics, the Prometheus exposition of this node (docs/metrics.md). With CG_METRICS_TOKEN
 * set, a scraper presents it as a Bearer token (RFC 6750), compared as a SHA-256 digest in
 * constant time; without it, only a peer on the loopback interface is answered, so that a
 * service reachable from the network never shows its metrics to anyone who asks.
 */
export function registerMetricsRoute(app: FastifyInstance, services: Services): void {
  const metrics = services.metrics;
  if (!metrics) return;
  const expected = services.config.metricsTokenHash;
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics of this node',
        description: 'Text exposition format 0.0.4. Authorization: Bearer CG_METRICS_TOKEN; without that setting, loopback peers only.',
        tags: ['metrics'],
      },
    },
    async (request, reply) => {
      authorizeScrape(request, expected);
      const text = await scrapeText(metrics.registry);
      return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(text);
    },
  );
}

function authorizeScrape(request: FastifyRequest, expected: Buffer | undefined): void {
  if (!expected) {
    if (isLoopback(request.ip)) return;
    throw new HttpProblem(403, 'forbidden', 'metrics are answered to loopback peers only: set CG_METRICS_TOKEN to scrape from another host');
  }
  const presented = /^Bearer ([^\s]+)$/i.exec(request.headers.authorization ?? '')?.[1];
  const digest = createHash('sha256').update(presented ?? '').digest();
  if (presented === undefined || !timingSafeEqual(digest, expected)) {
    throw new HttpProblem(401, 'unauthenticated', 'GET /metrics needs Authorization: Bearer with the CG_METRICS_TOKEN of this service', {
      headers: { 'www-authenticate': 'Bearer realm="clinical-gateway metrics"' },
    });
  }
}

function isLoopback(address: string): boolean {
  return address === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/i.test(address);
}
