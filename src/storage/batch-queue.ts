/** What a batch's runner says of one of its items. */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface BatchQueueOptions<I, R> {
  /** Batches running at once. */
  maxInFlight: number;
  /**
   * Milliseconds the newest running batch must have run before another starts beside it (0: at
   * once). One batch at a time makes the largest batches under load; a batch held up (by a lock,
   * a slow disk) must still not hold up everything queued behind it for longer than this.
   */
  spreadAfterMs?: number;
  maxBatch: number;
  /**
   * A bound on a batch's total weight (its bytes, say); a batch always takes at least one item.
   * Items are weighed only when a batch could hold more than one, so a lone item never is.
   */
  maxWeight?: number;
  weigh?(item: I): number;
  /** Runs one batch; answers each item, in order. A throw fails every item of the batch with it. */
  run(items: readonly I[]): Promise<Settled<R>[]>;
}

interface Waiting<I, R> {
  item: I;
  weight?: number;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * Groups concurrent calls into batches. The calls made in one turn of the event loop leave
 * together at the end of that turn (a lone caller waits for nothing else); calls made while a
 * batch runs are queued and leave together when it finishes, or beside it once it has run for
 * spreadAfterMs. Under load the batches grow by themselves, with no delay added at low load.
 */
export class BatchQueue<I, R> {
  readonly #options: BatchQueueOptions<I, R>;
  #waiting: Waiting<I, R>[] = [];
  #inFlight = 0;
  #newestStartedAt = 0;
  #endOfTurnScheduled = false;
  #spreadTimer: NodeJS.Timeout | undefined;

  constructor(options: BatchQueueOptions<I, R>) {
    if (options.maxInFlight < 1 || options.maxBatch < 1) throw new RangeError('maxInFlight and maxBatch must be at least 1');
    this.#options = options;
  }

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      if (this.#endOfTurnScheduled) return;
      this.#endOfTurnScheduled = true;
      setImmediate(() => {
        this.#endOfTurnScheduled = false;
        this.#startNext();
      });
    });
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  #startNext(): void {
    const spreadAfterMs = this.#options.spreadAfterMs ?? 0;
    while (this.#inFlight < this.#options.maxInFlight && this.#waiting.length > 0) {
      if (this.#inFlight > 0) {
        const ranFor = performance.now() - this.#newestStartedAt;
        if (ranFor < spreadAfterMs) {
          this.#spreadLater(spreadAfterMs - ranFor);
          return;
        }
      }
      const batch = this.#waiting.splice(0, this.#nextBatchSize());
      this.#inFlight++;
      this.#newestStartedAt = performance.now();
      void this.#runBatch(batch).finally(() => {
        this.#inFlight--;
        this.#startNext();
      });
    }
  }

  /** Looks again once the newest batch has run long enough; unref'd, so it keeps no process alive. */
  #spreadLater(delayMs: number): void {
    if (this.#spreadTimer) return;
    this.#spreadTimer = setTimeout(() => {
      this.#spreadTimer = undefined;
      this.#startNext();
    }, Math.ceil(delayMs));
    this.#spreadTimer.unref();
  }

  #nextBatchSize(): number {
    const { maxBatch, maxWeight = Infinity } = this.#options;
    const waiting = this.#waiting;
    if (waiting.length <= 1 || maxBatch === 1) return Math.min(waiting.length, 1);
    let weight = this.#weightOf(waiting[0]!);
    let size = 1;
    for (; size < waiting.length && size < maxBatch; size++) {
      const next = this.#weightOf(waiting[size]!);
      if (weight + next > maxWeight) break;
      weight += next;
    }
    return size;
  }

  #weightOf(waiting: Waiting<I, R>): number {
    return (waiting.weight ??= this.#options.weigh?.(waiting.item) ?? 0);
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
