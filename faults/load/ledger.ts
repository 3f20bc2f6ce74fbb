/**
 * The senders' own record of what they sent and what the service acknowledged: the ground truth
 * the data check compares the service's state against. Every answer is kept with its time, so
 * that answers given during an injected fault can be judged separately.
 */
export type Verdict = 'ack' | 'retry-later' | 'permanent' | 'no-answer';

export interface Answer {
  at: number;
  verdict: Verdict;
  detail: string;
}

export interface LedgerItem<Data> {
  key: string;
  data: Data;
  attempts: number;
  acknowledged: boolean;
  /** What the acknowledgement carried (FHIR id, ACK text...). */
  receipt?: string;
  answers: Answer[];
  inFlight?: boolean;
}

export class Ledger<Data> {
  readonly items: LedgerItem<Data>[] = [];
  #next = 0;
  readonly #make: (index: number) => { key: string; data: Data };

  constructor(make: (index: number) => { key: string; data: Data }) {
    this.#make = make;
  }

  /** An item that was sent but not acknowledged (retried first), else a new one. */
  take(allowNew: boolean): LedgerItem<Data> | undefined {
    const retry = this.items.find((item) => !item.acknowledged && !item.inFlight && item.attempts > 0);
    if (retry) return this.#claim(retry);
    if (!allowNew) return undefined;
    const made = this.#make(this.#next++);
    const item: LedgerItem<Data> = { ...made, attempts: 0, acknowledged: false, answers: [] };
    this.items.push(item);
    return this.#claim(item);
  }

  #claim(item: LedgerItem<Data>): LedgerItem<Data> {
    item.inFlight = true;
    item.attempts++;
    return item;
  }

  settle(item: LedgerItem<Data>, answer: Omit<Answer, 'at'>, receipt?: string): void {
    item.inFlight = false;
    item.answers.push({ ...answer, at: Date.now() });
    if (answer.verdict === 'ack') {
      item.acknowledged = true;
      if (receipt !== undefined) item.receipt = receipt;
    }
  }

  get sent(): number {
    return this.items.length;
  }

  get acknowledged(): number {
    return this.items.filter((item) => item.acknowledged).length;
  }

  get pending(): LedgerItem<Data>[] {
    return this.items.filter((item) => !item.acknowledged);
  }

  answers(from = 0, to = Number.POSITIVE_INFINITY): Answer[] {
    return this.items.flatMap((item) => item.answers.filter((a) => a.at >= from && a.at <= to));
  }
}
