/**
 * Serves the study viewer's bundle (viewer-bundle.ts) under /assets/viewer-lib/, from this origin
 * like the rest of the app. Built on the first request if needed, then held in memory with an ETag.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ensureViewerBundle } from './viewer-bundle.ts';

const servedFiles: Record<string, string> = {
  'cornerstone-viewer.js': 'text/javascript; charset=utf-8',
  'decodeImageFrameWorker.js': 'text/javascript; charset=utf-8',
  'cornerstone-viewer.js.LEGAL.txt': 'text/plain; charset=utf-8',
  'charlswasm_decode.wasm': 'application/wasm',
  'libjpegturbowasm_decode.wasm': 'application/wasm',
  'openjpegwasm_decode.wasm': 'application/wasm',
  'openjphjs.wasm': 'application/wasm',
  'jpegxlwasm_decode.wasm': 'application/wasm',
};

interface LoadedFile {
  body: Buffer;
  etag: string;
}

export function registerViewerAssets(app: FastifyInstance): void {
  const loaded = new Map<string, Promise<LoadedFile>>();
  const load = (name: string) => {
    let file = loaded.get(name);
    if (!file) {
      file = ensureViewerBundle().then(async (folder) => {
        const body = await readFile(join(folder, name));
        return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      });
      file.catch(() => loaded.delete(name));
      loaded.set(name, file);
    }
    return file;
  };
  app.get('/assets/viewer-lib/:file', { schema: { hide: true } }, async (request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply) => {
    const contentType = Object.hasOwn(servedFiles, request.params.file) ? servedFiles[request.params.file] : undefined;
    if (!contentType) return reply.code(404).type('text/plain; charset=utf-8').send('not found');
    const file = await load(request.params.file);
    reply.header('etag', file.etag).header('cache-control', 'no-cache').type(contentType);
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.send(file.body);
  });
}
