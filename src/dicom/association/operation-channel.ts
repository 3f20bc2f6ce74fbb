/**
 * What a long DIMSE operation (C-FIND, C-GET, C-MOVE) has of its association while it runs: it
 * sends its own responses, one after another, while the association keeps reading the requestor's
 * PDUs, so a C-CANCEL (PS3.7 9.3.2.3) or a C-STORE response of a C-GET sub-operation reaches it.
 */
import type { CommandSet } from '../dimse/command-set.ts';
import type { AcceptedContext } from './negotiate.ts';

export interface OperationChannel {
  readonly contexts: ReadonlyMap<number, AcceptedContext>;
  /** Largest PDU the requestor receives; 0 means unlimited (PS3.8 D.1). */
  readonly peerMaxPduLength: number;
  /** Aborted by a C-CANCEL of this operation, or when the association ends. */
  readonly signal: AbortSignal;
  /** Sends whole PDUs; resolves once the socket takes more (TCP flow control holds a slow reader). */
  write(pdu: Buffer): Promise<void>;
  /** The requestor's next C-STORE response (C-GET); rejects when the association ends first. */
  nextStoreResponse(): Promise<CommandSet>;
}

/** C-STORE responses received for a running C-GET, handed to it in order. */
export class StoreResponses {
  readonly #queue: CommandSet[] = [];
  #waiting: { resolve(command: CommandSet): void; reject(error: Error): void } | undefined;
  #closed: Error | undefined;

  push(command: CommandSet): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) waiting.resolve(command);
    else this.#queue.push(command);
  }

  next(): Promise<CommandSet> {
    const queued = this.#queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  close(reason: Error): void {
    this.#closed = reason;
    this.#waiting?.reject(reason);
    this.#waiting = undefined;
  }
}
