/**
 * A small pool of render worker threads, so that decoding a large frame (a JPEG 2000 mammogram
 * takes seconds of CPU) never stalls the serving process's event loop. Each worker renders one
 * frame at a time; requests beyond the workers wait in a bounded queue, and past it are refused
 * as busy (503, retry). A render that overruns its time, or kills its worker (a decoder fault on a
 * corrupt file), is refused as that instance's failure and the worker is replaced.
 *
 * A thread is started when a render needs one and ended once it has been idle for idleMs: each
 * holds an isolate with sharp, dcmjs-imaging and, once a compressed frame needed them, its
 * codecs (about 70-90 MB resident with thumbnails of the bench's sets), which a process that
 * renders now and then need not keep.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ServiceBusyError } from '../../errors.ts';
import { CannotRenderError, type CannotRenderReason, type RenderedImage, type RenderedMediaType, type RenderOptions } from './render-options.ts';
import type { RenderJob, RenderReply } from './render-worker.ts';

export interface RenderPoolOptions {
  threads: number;
  maxQueued: number;
  timeoutMs: number;
  /** A thread with nothing to render for this long is ended (a later render starts another). */
  idleMs: number;
}

/** One thread less than the cores (at least one, at most four), a queue of 64, 30 s a frame, threads ended after 10 s idle. */
export const defaultRenderPoolOptions: RenderPoolOptions = {
  threads: Math.max(1, Math.min(4, availableParallelism() - 1)),
  maxQueued: 64,
  timeoutMs: 30_000,
  idleMs: 10_000,
};

interface Pending {
  job: RenderJob;
  resolve(image: RenderedImage): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  busy?: { pending: Pending; timer: NodeJS.Timeout };
  idle?: NodeJS.Timeout;
}

const workerUrl = new URL('./render-worker.ts', import.meta.url);

/**
 * A frame's pixels are ArrayBuffers outside the heap; what the heap holds of a render is
 * short-lived. A 4 MB young generation instead of V8's default: one thread rendering the bench's
 * CT frames, 4 at a time, peaked at 139-140 MB of its process instead of 153-156, for 8.5-8.7 ms
 * of CPU a thumbnail instead of 9.3-9.4 (with the service's malloc settings,
 * src/cli/service-runtime.ts; without them, the arenas' growth hid the difference). In the
 * service with two workers the peak did not move, and a multi-frame thumbnail took 30 ms of CPU
 * instead of 34 (docs/performance.md).
 */
const renderThreadLimits = { maxOldGenerationSizeMb: 512, maxYoungGenerationSizeMb: 4 };

export class RenderPool {
  readonly #options: RenderPoolOptions;
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: RenderPoolOptions = defaultRenderPoolOptions) {
    this.#options = options;
  }

  /** Renders a frame of the stored file at `path` (absolute, already resolved inside the storage folder). */
  render(path: string, options: RenderOptions): Promise<RenderedImage> {
    if (this.#closed) return Promise.reject(new ServiceBusyError('rendering is shutting down'));
    if (this.#queue.length >= this.#options.maxQueued) return Promise.reject(new ServiceBusyError('too many renderings are waiting; retry shortly', 2));
    return new Promise<RenderedImage>((resolve, reject) => {
      this.#queue.push({ job: { id: this.#nextId++, path, options }, resolve, reject });
      this.#dispatch();
    });
  }

  /** Render threads running now. */
  get threads(): number {
    return this.#slots.length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) pending.reject(new ServiceBusyError('rendering is shutting down'));
    await Promise.all(this.#slots.splice(0).map((slot) => this.#retire(slot, new ServiceBusyError('rendering is shutting down'))));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slot = this.#slots.find((candidate) => !candidate.busy) ?? this.#startWorker();
      if (!slot) return;
      const pending = this.#queue.shift()!;
      clearTimeout(slot.idle);
      slot.idle = undefined;
      const timer = setTimeout(() => {
        void this.#retire(slot, new CannotRenderError('too-large', `the rendering took longer than ${this.#options.timeoutMs / 1000} s and was stopped`));
        this.#dispatch();
      }, this.#options.timeoutMs);
      slot.busy = { pending, timer };
      slot.ready.then(() => slot.worker.postMessage(pending.job), () => undefined);
    }
  }

  #startWorker(): Slot | undefined {
    if (this.#slots.length >= this.#options.threads) return undefined;
    // No inherited process flags: some (--input-type, --eval) are refused by a worker started from a file.
    const worker = new Worker(workerUrl, { execArgv: [], resourceLimits: renderThreadLimits });
    let markReady: () => void = () => undefined;
    const slot: Slot = { worker, ready: new Promise<void>((resolve) => (markReady = resolve)) };
    worker.on('message', (message: RenderReply | { ready: true }) => {
      if ('ready' in message) return markReady();
      this.#finish(slot, message);
    });
    worker.on('error', (error) => this.#lost(slot, error));
    worker.on('exit', () => this.#lost(slot, new Error('the render worker stopped')));
    // After the listeners (adding one refs the worker again): an idle pool never keeps a process alive.
    worker.unref();
    this.#slots.push(slot);
    return slot;
  }

  #finish(slot: Slot, reply: RenderReply): void {
    const busy = slot.busy;
    if (!busy || busy.pending.job.id !== reply.id) return;
    clearTimeout(busy.timer);
    slot.busy = undefined;
    this.#idleFrom(slot);
    if (reply.ok) busy.pending.resolve({ mediaType: reply.mediaType as RenderedMediaType, body: Buffer.from(reply.body.buffer, reply.body.byteOffset, reply.body.byteLength), width: reply.width, height: reply.height });
    else if (reply.reason) busy.pending.reject(new CannotRenderError(reply.reason as CannotRenderReason, reply.message));
    else busy.pending.reject(new CannotRenderError('corrupt', `the instance cannot be rendered: ${reply.message}`));
    this.#dispatch();
  }

  #idleFrom(slot: Slot): void {
    slot.idle = setTimeout(() => void this.#retire(slot), this.#options.idleMs);
    // An idle pool never keeps a process alive.
    slot.idle.unref();
  }

  /** A worker that died (out of memory, a decoder abort) takes only its own job with it. */
  #lost(slot: Slot, error: Error): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    clearTimeout(slot.idle);
    if (slot.busy) {
      clearTimeout(slot.busy.timer);
      slot.busy.pending.reject(new CannotRenderError('corrupt', `the instance cannot be rendered: ${error.message}`));
      slot.busy = undefined;
    }
    if (!this.#closed) this.#dispatch();
  }

  async #retire(slot: Slot, error?: Error): Promise<void> {
    const index = this.#slots.indexOf(slot);
    if (index >= 0) this.#slots.splice(index, 1);
    clearTimeout(slot.idle);
    if (slot.busy && error) {
      clearTimeout(slot.busy.timer);
      slot.busy.pending.reject(error);
      slot.busy = undefined;
    }
    await slot.worker.terminate();
  }
}

let shared: RenderPool | undefined;

/** The process's pool, started on first use (a process that never renders starts no thread). */
export function sharedRenderPool(): RenderPool {
  shared ??= new RenderPool();
  return shared;
}
