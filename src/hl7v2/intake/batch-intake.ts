/**
 * The messages of a batch (er7/batch.ts), taken one by one in the order received, each exactly as
 * if it had come alone: its own transaction, ACK, log entry and re-send check, on the transport's
 * own path (`ingest`). Once one is answered "send again later" (AR for a transient failure), the
 * ones after it are not applied but answered the same way: applying them first would reorder the
 * sender's messages (an update before its admission), and when the sender sends the batch again
 * the messages already applied get their original ACKs and change nothing.
 */
import { buildBatchAck } from '../ack/batch-ack.ts';
import type { SplitBatch } from '../er7/batch.ts';

/** Refusal given to the messages after one to be sent again (answered AR, retry). */
export class BatchHaltedError extends Error {
  constructor() {
    super('not processed: an earlier message of the batch is to be sent again first');
    this.name = 'BatchHaltedError';
  }
}

export interface BatchItemAnswer {
  ack: string;
  retry: boolean;
}

export interface BatchAnswer<T extends BatchItemAnswer> {
  /** answers[i][j]: message j of batch i. */
  answers: T[][];
  /** The batch of ACKs, segments joined by CR. */
  ack: string;
  /** True when some message is to be sent again. */
  retry: boolean;
}

export async function ingestBatchMessages<T extends BatchItemAnswer>(split: SplitBatch, ingest: (raw: Uint8Array, halted?: BatchHaltedError) => Promise<T>): Promise<BatchAnswer<T>> {
  const answers: T[][] = [];
  let halted: BatchHaltedError | undefined;
  for (const batch of split.batches) {
    const batchAnswers: T[] = [];
    answers.push(batchAnswers);
    for (const raw of batch.messages) {
      const answer = await ingest(raw, halted);
      if (answer.retry) halted ??= new BatchHaltedError();
      batchAnswers.push(answer);
    }
  }
  const ack = buildBatchAck(
    split,
    answers.map((batch) => batch.map((answer) => answer.ack)),
  );
  return { answers, ack, retry: halted !== undefined };
}
