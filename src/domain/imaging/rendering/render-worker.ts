/**
 * A render worker thread: renders one frame at a time for render-pool.ts. A refusal travels back
 * as its reason and message; anything else as a plain message (the pool replaces a worker that dies).
 */
import { parentPort } from 'node:worker_threads';
import sharp from 'sharp';
import { renderStoredFrame } from './render-frame.ts';
import { CannotRenderError, type RenderOptions } from './render-options.ts';

export interface RenderJob {
  id: number;
  path: string;
  options: RenderOptions;
}

export type RenderReply =
  | { id: number; ok: true; mediaType: string; body: Uint8Array; width: number; height: number }
  | { id: number; ok: false; reason?: string; message: string };

// One libvips thread and no operation cache: the pool, not libvips, decides how many cores renders take.
sharp.concurrency(1);
sharp.cache(false);

parentPort!.on('message', async (job: RenderJob) => {
  let reply: RenderReply;
  try {
    const image = await renderStoredFrame(job.path, job.options);
    const body = new Uint8Array(image.body.buffer, image.body.byteOffset, image.body.byteLength);
    reply = { id: job.id, ok: true, mediaType: image.mediaType, body, width: image.width, height: image.height };
  } catch (error) {
    reply = error instanceof CannotRenderError
      ? { id: job.id, ok: false, reason: error.reason, message: error.message }
      : { id: job.id, ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage({ ready: true });
