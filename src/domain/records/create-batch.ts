import type { Resource } from '@medplum/fhirtypes';
import { BatchQueue, type Settled } from '../../storage/batch-queue.ts';
import type { Database, Queryable } from '../../storage/database.ts';
import { isRetryableTransactionError } from '../../storage/errors.ts';
import type { SiteContext } from '../site-context.ts';
import type { IndexValues } from './index-values.ts';
import type { StoredResourceType } from './search-parameters.ts';

/** A validated new resource (id and meta set) with its index values, ready to be written. */
export interface PendingCreate {
  site: SiteContext;
  type: StoredResourceType;
  resource: Resource;
  values: IndexValues;
  /** The patient the resource must belong to in its site, when its type has one. */
  subject: string | null;
}

/** Why a create of a batch was not written, told apart so that the caller can phrase its error. */
export type CreateOutcome = 'written' | 'subject-unknown';

/** Writes one create on its own (the unbatched statement), as the caller does outside a batch. */
export type WriteOne = (database: Database, pending: PendingCreate) => Promise<void>;

// One batch at a time, while it runs normally: the creates of a turn of the event loop leave
// together, and those arriving meanwhile make the next batch as large as the load allows (on two
// cores, 1.09x the creates a second of two batches at once, in four alternating pairs;
// docs/architecture/performance.md). A batch that has run for 25 ms (held up by a lock or a slow
// disk) lets a second start beside it, so that it cannot hold up every create of the process.
const maxInFlight = 2;
const spreadAfterMs = 25;
const maxBatch = 64;
// A batch travels as one parameter: many large resources (bodies may be up to 4 MiB) must not
// make one of hundreds of megabytes. Larger creates go in smaller batches, or alone.
const maxBatchBytes = 1024 * 1024;

/** A create in the queue; its row of the batch statement is serialised once, when first needed. */
interface QueuedCreate {
  pending: PendingCreate;
  row?: string;
}

/** A lone create is written by the single statement and never needs its row. */
function rowOf(queued: QueuedCreate): string {
  return (queued.row ??= JSON.stringify(batchRow(queued.pending)));
}

const queues = new WeakMap<Database, BatchQueue<QueuedCreate, CreateOutcome>>();

/**
 * Standalone creates made in one turn of the event loop, or while a batch is being written,
 * leave together as one statement: its rows are committed by one transaction, so each create is
 * still acknowledged only after the commit that made it durable, but many share one round trip,
 * one plan and one WAL flush. A lone create is written by the ordinary single statement.
 * When a batch fails on something one of its rows did (a constraint, a deadlock), nothing of it
 * was written and each create is written again on its own, so that each gets its own answer.
 */
export function createBatched(database: Database, pending: PendingCreate, writeOne: WriteOne): Promise<CreateOutcome> {
  let queue = queues.get(database);
  if (!queue) {
    queue = new BatchQueue<QueuedCreate, CreateOutcome>({
      maxInFlight,
      spreadAfterMs,
      maxBatch,
      maxWeight: maxBatchBytes,
      weigh: (queued) => rowOf(queued).length,
      run: (batch) => writeBatch(database, batch, writeOne),
    });
    queues.set(database, queue);
  }
  return queue.add({ pending });
}

async function writeBatch(database: Database, batch: readonly QueuedCreate[], writeOne: WriteOne): Promise<Settled<CreateOutcome>[]> {
  if (batch.length === 1) return [await settle(database, batch[0]!.pending, writeOne)];
  let written: Set<string>;
  try {
    written = await insertBatch(database, `[${batch.map(rowOf).join(',')}]`);
  } catch (error) {
    if (!causedByARow(error)) throw error;
    return Promise.all(batch.map((queued) => settle(database, queued.pending, writeOne)));
  }
  return batch.map(({ pending }) => ({ ok: true, value: written.has(pending.resource.id!) ? 'written' : 'subject-unknown' }));
}

/**
 * Several creates inside the caller's transaction, as one batch statement; the ids written (a
 * create whose subject is not a patient of its site is not). Any error is the caller's
 * transaction's, as it would be for one create.
 */
export function writeCreatesIn(tx: Queryable, creates: readonly PendingCreate[]): Promise<Set<string>> {
  return insertBatch(tx, JSON.stringify(creates.map(batchRow)));
}

/** Runs the batch statement over a JSON array of batch rows; the ids of the rows written. */
async function insertBatch(db: Queryable, rows: string): Promise<Set<string>> {
  const { rows: written } = await db.query<{ id: string }>({ name: 'records-write-insert-batch', text: insertBatchStatement, values: [rows] });
  return new Set(written.map((row) => row.id));
}

async function settle(database: Database, pending: PendingCreate, writeOne: WriteOne): Promise<Settled<CreateOutcome>> {
  try {
    await writeOne(database, pending);
    return { ok: true, value: 'written' };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Integrity violations (class 23), deadlocks and serialization failures: a row's doing, not the server's. */
function causedByARow(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (typeof code === 'string' && code.startsWith('23')) || isRetryableTransactionError(error);
}

function batchRow(pending: PendingCreate): Record<string, unknown> {
  const { site, type, resource, values, subject } = pending;
  return {
    site_id: site.siteId,
    resource_type: type,
    id: resource.id,
    last_updated: resource.meta!.lastUpdated,
    content: resource,
    patient_id: values.patientId,
    business_identifier: values.businessIdentifier,
    active: values.active,
    name_search: values.nameSearch,
    birth_date_start: values.birthDateStart,
    birth_date_end: values.birthDateEnd,
    clinical_date_start: values.clinicalDateStart,
    clinical_date_end: values.clinicalDateEnd,
    subject,
    tokens: values.tokens,
  };
}

// The batch travels as one JSON array (node-postgres would quote every element of a jsonb[]
// array a second time). Each row is written only when its subject, if any, is a patient of its
// own site, as the single statement does; the rows returned are those written.
const insertBatchStatement = `WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
      site_id uuid, resource_type text, id uuid, last_updated timestamptz, content jsonb, patient_id uuid,
      business_identifier text, active boolean, name_search text, birth_date_start date, birth_date_end date,
      clinical_date_start timestamptz, clinical_date_end timestamptz, subject uuid, tokens jsonb)),
  accepted AS (
    SELECT * FROM input WHERE subject IS NULL OR EXISTS (
      SELECT 1 FROM clinical_resource c
       WHERE c.site_id = input.site_id AND c.resource_type = 'Patient' AND c.id = input.subject)),
  current_row AS (
    INSERT INTO clinical_resource (site_id, resource_type, id, version_id, last_updated, content, patient_id,
      business_identifier, active, name_search, birth_date_start, birth_date_end, clinical_date_start, clinical_date_end)
    SELECT site_id, resource_type, id, 1, last_updated, content, patient_id,
      business_identifier, active, name_search, birth_date_start, birth_date_end, clinical_date_start, clinical_date_end FROM accepted
    RETURNING id),
  version_row AS (
    INSERT INTO clinical_resource_version (site_id, resource_type, id, version_id, last_updated, content)
    SELECT site_id, resource_type, id, 1, last_updated, content FROM accepted),
  token_rows AS (
    INSERT INTO clinical_resource_token (site_id, resource_type, param, code, system, resource_id)
    SELECT a.site_id, a.resource_type, t.param, t.code, t.system, a.id
      FROM accepted a, jsonb_to_recordset(a.tokens) AS t(param text, code text, system text))
  SELECT id FROM current_row`;
