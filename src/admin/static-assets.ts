/**
 * The web app's files, served by the admin origin itself from the repository's web/ folder (no
 * CDN, no network at run time, no build step: the browser loads the ES modules as written).
 * Files are read once at start and served with an ETag, so a reload revalidates cheaply.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

export const webRoot = fileURLToPath(new URL('../../web/', import.meta.url));

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

function assetOf(name: string, body: Buffer): Asset {
  return { body, contentType: contentTypes[extname(name)]!, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function loadAssets(root: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (directory: string) => {
    for (const name of readdirSync(directory)) {
      const path = join(directory, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (contentTypes[extname(name)]) {
        assets.set(relative(root, path).split(sep).join('/'), assetOf(name, readFileSync(path)));
      }
    }
  };
  walk(root);
  return assets;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  reply.header('etag', asset.etag).header('cache-control', 'no-cache').type(asset.contentType);
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.send(asset.body);
}

/**
 * Libraries the web app loads as published on npm (no build step): served under
 * /assets/vendor/, read from node_modules at start.
 */
const vendorFiles: [string, URL][] = [
  ['vendor/uplot/uPlot.esm.js', new URL('../../node_modules/uplot/dist/uPlot.esm.js', import.meta.url)],
  ['vendor/uplot/uPlot.min.css', new URL('../../node_modules/uplot/dist/uPlot.min.css', import.meta.url)],
];

export function registerStaticAssets(app: FastifyInstance, root = webRoot): void {
  const assets = loadAssets(root);
  for (const [name, url] of vendorFiles) assets.set(name, assetOf(name, readFileSync(url)));
  const index = assets.get('index.html');
  if (!index) throw new Error(`the web app is missing: no index.html in ${root}`);
  const hidden = { hide: true } as const;
  app.get('/', { schema: hidden }, async (request, reply) => send(request, reply, index));
  app.get('/assets/*', { schema: hidden }, async (request: FastifyRequest<{ Params: { '*': string } }>, reply) => {
    const asset = assets.get(request.params['*']);
    if (!asset || request.params['*'] === 'index.html') {
      return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    }
    return send(request, reply, asset);
  });
}
