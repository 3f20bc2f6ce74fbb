/**
 * The data access log (issue 26 point 14): who read which patient's data, when, from where, and
 * through which surface. HIPAA 164.312(b) asks for audit controls that record activity in systems
 * holding health information; IHE ATNA and FHIR AuditEvent record the same facts (agent, source,
 * entity, patient).
 *
 * Records are written off the hot path: a read hands its record to a queue and answers at once;
 * the records of up to `gatherMs` leave together in one INSERT, one INSERT at a time. Each INSERT
 * costs PostgreSQL a commit and a fixed share of work whatever its size, so under load a few
 * records per INSERT cost more than the read itself; gathered, the fixed share is spread thin.
 * A write that fails loses nothing the log cannot show: each of its records goes to the process
 * log at error level, complete. Reads fail closed only past a bound: when more than
 * `maxWaitingRecords` records of this process wait to be written (the database accepts reads but
 * not the log), reads and searches answer 503 until the backlog drains, so the service never goes
 * on serving clinical data it cannot account for.
 */
import { ServiceBusyError } from '../errors.ts';
import type { Database } from '../../storage/database.ts';

export type DataAccessInteraction = 'read' | 'vread' | 'history' | 'search' | 'view' | 'export';

export interface DataAccess {
  siteId: string;
  occurredAt: Date;
  /** The API key's owner or the signed-in user. */
  userId: string | null;
  keyId: string | null;
  remoteAddress: string | null;
  surface: 'fhir' | 'admin' | 'dicomweb' | 'cli';
  interaction: DataAccessInteraction;
  resourceType: string;
  query?: string;
  resourceIds: readonly string[];
  /** How many resources were disclosed when that is more than the ids given (a bulk export). */
  resourceCount?: number;
  patientIds: readonly string[];
}

/** Where a failed write is reported (the request's logger). */
export interface AccessLogSink {
  error(details: object, message: string): void;
}

/** Ids kept per record; a search page can return up to 1,000 (resource_count keeps the number). */
export const maxIdsPerRecord = 200;
const maxQueryLength = 2_000;
/** Records of one process waiting to be written before reads fail closed. */
export const maxWaitingRecords = 50_000;
/** Longest a record waits for others before its INSERT starts (besides an INSERT still running). */
export const gatherMs = 50;
const maxRecordsPerInsert = 1_000;

interface QueuedAccess {
  access: DataAccess;
  sink: AccessLogSink;
}

const insertSql = `
  INSERT INTO data_access_audit (site_id, occurred_at, user_id, key_id, remote_address, surface, interaction, resource_type, query, resource_ids, resource_count, patient_ids)
  SELECT r.site_id, r.occurred_at, r.user_id, r.key_id, r.remote_address, r.surface, r.interaction, r.resource_type, r.query, r.resource_ids, r.resource_count, r.patient_ids
    FROM jsonb_to_recordset($1::jsonb) AS r(site_id uuid, occurred_at timestamptz, user_id uuid, key_id uuid, remote_address text, surface text,
         interaction text, resource_type text, query text, resource_ids text[], resource_count integer, patient_ids text[])`;

function rowOf(access: DataAccess): Record<string, unknown> {
  const distinctPatients = [...new Set(access.patientIds)];
  return {
    site_id: access.siteId,
    occurred_at: access.occurredAt.toISOString(),
    user_id: access.userId,
    key_id: access.keyId,
    remote_address: access.remoteAddress,
    surface: access.surface,
    interaction: access.interaction,
    resource_type: access.resourceType,
    query: access.query === undefined ? null : access.query.slice(0, maxQueryLength),
    resource_ids: access.resourceIds.slice(0, maxIdsPerRecord),
    resource_count: access.resourceCount ?? access.resourceIds.length,
    patient_ids: distinctPatients.slice(0, maxIdsPerRecord),
  };
}

export class DataAccessRecorder {
  readonly #database: Database;
  #gathered: QueuedAccess[] = [];
  /** Gathered and being written. */
  #waiting = 0;
  #timer: NodeJS.Timeout | undefined;
  #writing = false;
  #idle: (() => void)[] = [];

  constructor(database: Database) {
    this.#database = database;
  }

  /**
   * Queues the record and returns at once. Throws ServiceBusyError (HTTP 503) instead, before
   * anything is sent, when the backlog is past its bound.
   */
  record(access: DataAccess, sink: AccessLogSink): void {
    if (this.#waiting >= maxWaitingRecords) {
      throw new ServiceBusyError('the data access log cannot be written right now, so clinical data is not served; retry later', 5);
    }
    this.#waiting += 1;
    this.#gathered.push({ access, sink });
    if (this.#gathered.length >= maxRecordsPerInsert) this.#writeNow();
    else this.#timer ??= setTimeout(() => this.#writeNow(), gatherMs);
  }

  /** Resolves once every record queued so far is written (or logged as failed); writes the gathered ones at once. */
  async settled(): Promise<void> {
    if (this.#waiting === 0) return;
    const idle = new Promise<void>((resolve) => this.#idle.push(resolve));
    this.#writeNow();
    await idle;
  }

  #writeNow(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#writing || this.#gathered.length === 0) return;
    this.#writing = true;
    const batch = this.#gathered.splice(0, maxRecordsPerInsert);
    void this.#write(batch).finally(() => {
      this.#writing = false;
      this.#waiting -= batch.length;
      if (this.#waiting === 0) for (const resolve of this.#idle.splice(0)) resolve();
      else if (this.#gathered.length >= maxRecordsPerInsert || this.#idle.length > 0) this.#writeNow();
      else if (this.#gathered.length > 0) this.#timer ??= setTimeout(() => this.#writeNow(), gatherMs);
    });
  }

  async #write(batch: readonly QueuedAccess[]): Promise<void> {
    try {
      await this.#database.query({ name: 'data-access-audit-insert', text: insertSql, values: [JSON.stringify(batch.map(({ access }) => rowOf(access)))] });
    } catch (error) {
      // Each record goes to the log: the log is then where that access is accounted for.
      for (const { access, sink } of batch) sink.error({ err: error, dataAccess: rowOf(access) }, 'data access log write failed; the access is recorded in this log line');
    }
  }
}

const recorders = new WeakMap<Database, DataAccessRecorder>();

/** The recorder of this database pool: one queue per pool, so that records batch together. */
export function dataAccessRecorder(database: Database): DataAccessRecorder {
  let recorder = recorders.get(database);
  if (!recorder) recorders.set(database, (recorder = new DataAccessRecorder(database)));
  return recorder;
}
