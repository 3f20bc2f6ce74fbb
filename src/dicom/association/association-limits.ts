/**
 * Caps on concurrent associations, overall and per remote IP (issue 5, point 1): one busy or
 * misbehaving modality cannot take every slot. A connection holds its slot from accept to close.
 */
export class AssociationLimits {
  readonly maxTotal: number;
  readonly maxPerAddress: number;
  #total = 0;
  #perAddress = new Map<string, number>();

  constructor(maxTotal: number, maxPerAddress: number) {
    this.maxTotal = maxTotal;
    this.maxPerAddress = maxPerAddress;
  }

  get active(): number {
    return this.#total;
  }

  /** Takes a slot for this address, or returns false when a cap is reached. */
  acquire(address: string): boolean {
    const count = this.#perAddress.get(address) ?? 0;
    if (this.#total >= this.maxTotal || count >= this.maxPerAddress) return false;
    this.#total++;
    this.#perAddress.set(address, count + 1);
    return true;
  }

  release(address: string): void {
    const count = this.#perAddress.get(address) ?? 0;
    if (count <= 1) this.#perAddress.delete(address);
    else this.#perAddress.set(address, count - 1);
    this.#total = Math.max(0, this.#total - 1);
  }
}
