/**
 * Caps on things held at once, overall and per key (a remote address, an API key): one busy or
 * hostile peer cannot take every slot. A holder keeps its slot from `acquire` to `release`.
 */
export class KeyedLimit {
  readonly maxTotal: number;
  readonly maxPerKey: number;
  #total = 0;
  #perKey = new Map<string, number>();

  constructor(maxTotal: number, maxPerKey: number) {
    this.maxTotal = maxTotal;
    this.maxPerKey = maxPerKey;
  }

  get active(): number {
    return this.#total;
  }

  /** Takes a slot for this key, or returns false when a cap is reached. */
  acquire(key: string): boolean {
    const count = this.#perKey.get(key) ?? 0;
    if (this.#total >= this.maxTotal || count >= this.maxPerKey) return false;
    this.#total++;
    this.#perKey.set(key, count + 1);
    return true;
  }

  release(key: string): void {
    const count = this.#perKey.get(key) ?? 0;
    if (count <= 1) this.#perKey.delete(key);
    else this.#perKey.set(key, count - 1);
    this.#total = Math.max(0, this.#total - 1);
  }
}
