/**
 * Connection slots of a listener, capped per remote address and in all, shared fairly: when every
 * slot is taken, a newcomer from an address holding fewer connections takes the slot of one held
 * by the address holding the most (which is closed), instead of being refused. One peer, or a
 * few addresses of one sender, can then fill the listener only while nobody else needs it. At
 * its own address's cap, a newcomer takes the slot of that address's oldest idle connection:
 * idle or forgotten connections (a sender that reconnected without closing, a flood of silent
 * sockets) never lock out the one that has something to send.
 */
export class FairConnectionSlots<Holder> {
  readonly maxTotal: number;
  readonly maxPerAddress: number;
  readonly #byAddress = new Map<string, Set<Holder>>();
  readonly #evictable: (holder: Holder) => boolean;
  #total = 0;

  /** `evictable` says which holders may be closed to make room (idle, or not yet associated). */
  constructor(maxTotal: number, maxPerAddress: number, evictable: (holder: Holder) => boolean = () => true) {
    this.maxTotal = maxTotal;
    this.maxPerAddress = maxPerAddress;
    this.#evictable = evictable;
  }

  /**
   * Takes a slot for `holder`. Refused: 'address' (its address is at its cap) or 'full'. Admitted
   * by taking another's slot: `evicted` is that holder, whose slot is already given back; the
   * caller closes it.
   */
  admit(address: string, holder: Holder): { admitted: true; evicted?: Holder } | { admitted: false; reason: 'address' | 'full' } {
    const own = this.#byAddress.get(address)?.size ?? 0;
    let evicted: Holder | undefined;
    if (own >= this.maxPerAddress) {
      evicted = this.#oldestEvictable(this.#byAddress.get(address));
      if (evicted === undefined) return { admitted: false, reason: 'address' };
      this.release(address, evicted);
    } else if (this.#total >= this.maxTotal) {
      evicted = this.#crowdingHolder(own) ?? this.#oldestEvictable(this.#byAddress.get(address));
      if (evicted === undefined) return { admitted: false, reason: 'full' };
      this.release(this.#addressOf(evicted)!, evicted);
    }
    let set = this.#byAddress.get(address);
    if (!set) this.#byAddress.set(address, (set = new Set()));
    set.add(holder);
    this.#total++;
    return evicted === undefined ? { admitted: true } : { admitted: true, evicted };
  }

  /** Gives the slot back; a holder already evicted or released is ignored. */
  release(address: string, holder: Holder): void {
    const set = this.#byAddress.get(address);
    if (!set?.delete(holder)) return;
    this.#total--;
    if (set.size === 0) this.#byAddress.delete(address);
  }

  /** The oldest evictable holder of the address holding the most slots, if it holds at least two more than `own`. */
  #crowdingHolder(own: number): Holder | undefined {
    let crowded: Set<Holder> | undefined;
    for (const set of this.#byAddress.values()) if (!crowded || set.size > crowded.size) crowded = set;
    if (!crowded || crowded.size < own + 2) return undefined;
    return this.#oldestEvictable(crowded);
  }

  /** Sets keep insertion order: the first evictable holder is the oldest. */
  #oldestEvictable(holders: Set<Holder> | undefined): Holder | undefined {
    for (const holder of holders ?? []) if (this.#evictable(holder)) return holder;
    return undefined;
  }

  #addressOf(holder: Holder): string | undefined {
    for (const [address, set] of this.#byAddress) if (set.has(holder)) return address;
    return undefined;
  }
}
