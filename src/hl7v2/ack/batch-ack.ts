/**
 * The answer to a batch (HL7 v2.5.1 section 2.10.3.3): a batch of acknowledgements in the same
 * envelope, one ACK per message in the order received. FHS and BHS are answered with sender and
 * receiver swapped, a new control id, and the received control id as the reference (FHS-12,
 * BHS-12), so that the sender can match the response to its batch; BTS-1 and FTS-1 count what the
 * response holds. Several messages sent with no envelope get their ACKs one after the other.
 */
import type { Batch, EnvelopeSegment, SplitBatch } from '../er7/batch.ts';
import { defaultDelimiters, type Delimiters } from '../er7/delimiters.ts';
import { escapeText } from '../er7/escape.ts';
import { hl7Timestamp, newControlId } from './build-ack.ts';

/** `acks[i][j]`: the ACK (segments joined by CR) of message j of batch i. */
export function buildBatchAck(split: SplitBatch, acks: string[][], now: Date = new Date()): string {
  const segments: string[] = [];
  // The notes (counts that did not match) go in the comment (FHS-10, else BHS-10) of the first header.
  let notes = split.notes;
  const header = (received: EnvelopeSegment) => {
    segments.push(answerHeader(received, now, notes));
    notes = [];
  };
  if (split.fhs) header(split.fhs);
  split.batches.forEach((batch: Batch, index) => {
    const batchAcks = acks[index] ?? [];
    if (batch.bhs) header(batch.bhs);
    segments.push(...batchAcks);
    if (batch.bhs || batch.bts) segments.push(`BTS${separatorOf(batch.bhs ?? split.fhs)}${batchAcks.length}`);
  });
  if (split.fhs || split.fts) segments.push(`FTS${separatorOf(split.fhs)}${split.batches.length}`);
  return segments.join('\r');
}

/** FHS or BHS of the answer: 3-4 and 5-6 swapped, a new control id, the received one referenced. */
function answerHeader(received: EnvelopeSegment, now: Date, notes: string[]): string {
  const f = received.fields;
  const d = delimitersOf(received);
  const comment = notes.map((note) => escapeText(note, d)).join('; ');
  const fields: string[] = [f[0]!, f[2] ?? '', f[5] ?? '', f[6] ?? '', f[3] ?? '', f[4] ?? '', hl7Timestamp(now), '', f[9] ?? '', comment, newControlId(), f[11] ?? ''];
  while (fields.length > 2 && fields[fields.length - 1] === '') fields.pop();
  return fields.join(d.field);
}

function separatorOf(segment: EnvelopeSegment | undefined): string {
  return segment?.fields[1] ?? defaultDelimiters.field;
}

/** The envelope's own delimiters (FHS-1/2, BHS-1/2), else the standard ones. */
function delimitersOf(segment: EnvelopeSegment): Delimiters {
  const encoding = segment.fields[2] ?? '';
  if (encoding.length < 4) return { ...defaultDelimiters, field: separatorOf(segment) };
  return { field: separatorOf(segment), component: encoding[0]!, repetition: encoding[1]!, escape: encoding[2]!, subcomponent: encoding[3]! };
}
