import { readFileSync } from 'node:fs';
import { after, before } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { startDicomListener, type DicomListener } from '../../src/dicom/listener.ts';
import { dicomwebSurface } from '../../src/dicomweb/surface.ts';
import type { SiteContext } from '../../src/domain/site-context.ts';
import { createOrigin } from '../../src/platform/http/origin.ts';
import { createGatewayMetrics } from '../../src/platform/metrics/gateway-metrics.ts';
import type { Services } from '../../src/platform/services.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { fixturePath } from '../support/fixtures.ts';
import { createTestApiKey, testServices } from '../support/http.ts';
import { createTestSite } from '../support/sites.ts';

export interface DicomwebOrigin {
  db: TestDatabase;
  services: Services;
  app: FastifyInstance;
  /** http://127.0.0.1:{port} */
  url: string;
  /** The DICOM listener on the same database and data directory. */
  listener: DicomListener;
}

/**
 * A DICOMweb origin listening on a loopback port, beside a DICOM listener sharing its storage;
 * `metrics`: with the service's Prometheus metrics in its services.
 */
export function useDicomwebOrigin(env: NodeJS.ProcessEnv = {}, options: { metrics?: boolean } = {}): DicomwebOrigin {
  const origin = {} as DicomwebOrigin;
  before(async () => {
    origin.db = await createTestDatabase();
    origin.services = { ...testServices(origin.db.database, env), ...(options.metrics ? { metrics: createGatewayMetrics() } : {}) };
    origin.app = await createOrigin(dicomwebSurface, origin.services);
    await origin.app.listen({ port: 0, host: '127.0.0.1' });
    const address = origin.app.server.address();
    origin.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    origin.listener = await startDicomListener(origin.services, { host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await origin.listener?.close();
    await origin.app?.close();
    await origin.db?.drop();
  });
  return origin;
}

export interface SiteKey {
  site: SiteContext;
  key: string;
}

export async function siteWithKey(origin: DicomwebOrigin): Promise<SiteKey> {
  const site = await createTestSite(origin.db.database);
  return { site, key: await createTestApiKey(origin.db.database, site) };
}

export const fixture = (name: string): Buffer => readFileSync(fixturePath(`dicom/${name}`));

/** A multipart/related body of the given parts. */
export function multipartBody(parts: { contentType: string; body: Buffer }[], boundary = 'test-boundary-1234'): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const part of parts) chunks.push(Buffer.from(`--${boundary}\r\nContent-Type: ${part.contentType}\r\n\r\n`), part.body, Buffer.from('\r\n'));
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/related; type="application/dicom"; boundary=${boundary}` };
}

export function stow(origin: DicomwebOrigin, key: string, files: Buffer[], path = '/studies'): Promise<Response> {
  const { body, contentType } = multipartBody(files.map((file) => ({ contentType: 'application/dicom', body: file })));
  return fetch(`${origin.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': contentType, accept: 'application/dicom+json' }, body });
}

/** Splits a multipart/related answer into its parts (test side: whole body in memory). */
export function parseMultipart(body: Buffer, contentType: string): { headers: Record<string, string>; body: Buffer }[] {
  const boundary = /boundary=("?)([^";]+)\1/.exec(contentType)?.[2];
  if (!boundary) throw new Error(`no boundary in ${contentType}`);
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: { headers: Record<string, string>; body: Buffer }[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const headerEnd = body.indexOf('\r\n\r\n', start);
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headerEnd);
    const headers: Record<string, string> = {};
    for (const line of body.subarray(start + 2, headerEnd).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    parts.push({ headers, body: body.subarray(headerEnd + 4, next) });
    at = next + 2;
  }
  return parts;
}
