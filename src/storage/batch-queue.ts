/** What a batch's runner says of one of its items. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface BatchQueueOptions<I, R> {
  /** Batches running at once; items arriving while all run wait and go together in the next. */
  maxInFlight: number;
  maxBatch: number;
  /** A bound on a batch's total weight (its bytes, say); a batch always takes at least one item. */
  maxWeight?: number;
  weigh?(item: I): number;
  /** Runs one batch; answers each item, in order. A throw fails every item of the batch with it. */
  run(items: readonly I[]): Promise<Settled<R>[]>;
}

interface Waiting<I, R> {
  item: I;
  weight: number;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * Groups concurrent calls into batches without a timer: a call made while fewer than
 * maxInFlight batches run starts one at once (alone, when nothing else waits), so a lone caller
 * waits for nothing; calls made while all run are queued and leave together as soon as one
 * finishes. Under load the batches grow by themselves, with no delay added at low load.
 */
export class BatchQueue<I, R> {
  readonly #options: BatchQueueOptions<I, R>;
  #waiting: Waiting<I, R>[] = [];
  #inFlight = 0;

  constructor(options: BatchQueueOptions<I, R>) {
    if (options.maxInFlight < 1 || options.maxBatch < 1) throw new RangeError('maxInFlight and maxBatch must be at least 1');
    this.#options = options;
  }

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, weight: this.#options.weigh?.(item) ?? 0, resolve, reject });
      this.#startNext();
    });
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  #startNext(): void {
    while (this.#inFlight < this.#options.maxInFlight && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#nextBatchSize());
      this.#inFlight++;
      void this.#runBatch(batch).finally(() => {
        this.#inFlight--;
        this.#startNext();
      });
    }
  }

  #nextBatchSize(): number {
    const { maxBatch, maxWeight = Infinity } = this.#options;
    let size = 0;
    let weight = 0;
    for (const waiting of this.#waiting) {
      if (size === maxBatch || (size > 0 && weight + waiting.weight > maxWeight)) break;
      size++;
      weight += waiting.weight;
    }
    return size;
  }

  async #runBatch(batch: Waiting<I, R>[]): Promise<void> {
    let outcomes: Settled<R>[];
    try {
      outcomes = await this.#options.run(batch.map((waiting) => waiting.item));
      if (outcomes.length !== batch.length) throw new Error(`a batch of ${batch.length} was answered with ${outcomes.length} outcomes`);
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome.error);
    });
  }
}
