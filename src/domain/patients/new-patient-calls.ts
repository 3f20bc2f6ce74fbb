/**
 * The calls of record_new_patient_message (migration 0850) of concurrent messages, sent together:
 * the messages that arrive on several connections while a call is on its way go in one call of
 * record_new_patient_messages (migration 0870), one transaction and one commit for all of them,
 * each answered only when that call has returned (committed). A lone message is called alone, so
 * nothing waits at low load. A call of several that fails as a whole wrote nothing; each of its
 * messages is then called alone, and gets the answer it would have got alone.
 */
import { BatchQueue, type Settled } from '../../storage/batch-queue.ts';
import type { Database } from '../../storage/database.ts';
import { isTransientDatabaseError } from '../../storage/errors.ts';

export type NewPatientCallOutcome = 'created' | 'exists' | 'duplicate';

/** The 37 parameters of record_new_patient_message, in order; the token arrays at 12 to 14. */
export type NewPatientCallValues = unknown[];

const parameters = 37;
const tokenParameters = [12, 13, 14];
/** The message's bytes (p_raw). */
const rawParameter = 30;
const single = `SELECT record_new_patient_message(${placeholders(parameters)}) AS outcome`;
const batched = `SELECT record_new_patient_messages(${placeholders(parameters + 1)}) AS outcomes`;

function placeholders(count: number): string {
  return Array.from({ length: count }, (_, i) => `$${i + 1}`).join(', ');
}

// One call at a time, another beside it each time the newest has run 5 ms, up to four (a commit
// held up must not hold up every new patient behind it): the messages of 8 connections then go
// about four to a call. In alternating runs, no wait made 2.7 a call and cost PostgreSQL 0.67 ms
// of CPU a message against 0.53 with a 20 ms wait; 5 ms against 20, 3.7 a call against 4,
// PostgreSQL 0.43 against 0.41 ms and 1.11x the messages a second (docs/performance.md).
// A call's messages are bounded by their bytes too: a call's parameters are built as text (arrays
// of hex and JSON), about twice the messages' size, and a sender may send messages of up to 1 MB.
const options = { maxInFlight: 4, spreadAfterMs: 5, maxBatch: 32, maxWeight: 1024 * 1024, weigh: (values: NewPatientCallValues) => (values[rawParameter] as Buffer).length };
const queues = new WeakMap<Database, BatchQueue<NewPatientCallValues, NewPatientCallOutcome>>();

/** Must be given the Database, not a transaction: the call commits on its own. */
export function callRecordNewPatientMessage(db: Database, values: NewPatientCallValues): Promise<NewPatientCallOutcome> {
  let queue = queues.get(db);
  if (!queue) {
    queue = new BatchQueue({ ...options, run: (items) => runCalls(db, items) });
    queues.set(db, queue);
  }
  return queue.add(values);
}

async function runCalls(db: Database, items: readonly NewPatientCallValues[]): Promise<Settled<NewPatientCallOutcome>[]> {
  if (items.length > 1) {
    try {
      const { rows } = await db.query<{ outcomes: NewPatientCallOutcome[] }>({ name: 'record-new-patient-messages', text: batched, values: batchValues(items) });
      return rows[0]!.outcomes.map((value) => ({ ok: true, value }));
    } catch (error) {
      // Every message would meet the same outage alone.
      if (isTransientDatabaseError(error)) return items.map(() => ({ ok: false, error }));
    }
  }
  const outcomes: Settled<NewPatientCallOutcome>[] = [];
  for (const values of items) {
    try {
      const { rows } = await db.query<{ outcome: NewPatientCallOutcome }>({ name: 'record-new-patient-message', text: single, values });
      outcomes.push({ ok: true, value: rows[0]!.outcome });
    } catch (error) {
      outcomes.push({ ok: false, error });
    }
  }
  return outcomes;
}

/** One array per parameter, one element per message; the token rows flat, with where each message's end. */
function batchValues(items: readonly NewPatientCallValues[]): unknown[] {
  const columns: unknown[][] = Array.from({ length: parameters }, () => []);
  const tokenEnds: number[] = [];
  for (const values of items) {
    for (let i = 0; i < parameters; i++) {
      if (tokenParameters.includes(i)) columns[i]!.push(...(values[i] as unknown[]));
      else columns[i]!.push(values[i]);
    }
    tokenEnds.push(columns[tokenParameters[0]!]!.length);
  }
  // p_token_ends goes just before the token arrays (migration 0870).
  const firstToken = tokenParameters[0]!;
  return [...columns.slice(0, firstToken), tokenEnds, ...columns.slice(firstToken)];
}
