/**
 * Reads what an export holds, type by type, through a server-side cursor (pg-cursor): rows come
 * `exportBatchRows` at a time, so memory holds one batch whatever the site's size. Every type is
 * read in one REPEATABLE READ READ ONLY transaction: the files are one consistent snapshot, taken
 * at the instant the manifest gives as transactionTime.
 */
import type pg from 'pg';
import Cursor from 'pg-cursor';
import { reportSelect, toReport, type ImagingReport } from '../imaging/report-queries.ts';
import { isStoredResourceType } from '../records/search-parameters.ts';
import type { ExportLevel } from './export-jobs.ts';

/** Rows fetched per cursor read. */
export const exportBatchRows = 1000;

export interface ExportSelection {
  siteId: string;
  level: ExportLevel;
  since: Date | null;
}

export interface ExportSnapshot {
  transactionTime: Date;
  /** Stored resources of the type as JSON text (one line each), a batch at a time. */
  storedResources(type: string): AsyncGenerator<string[]>;
  /** The site's imaging reports (DiagnosticReport is a view over them), a batch at a time. */
  imagingReports(): AsyncGenerator<ImagingReport[]>;
  /** Any query's rows in the same snapshot, a batch at a time (the site export's other records). */
  rows<Row>(text: string, values: unknown[]): AsyncGenerator<Row[]>;
}

async function* batches<Row>(client: pg.PoolClient, text: string, values: unknown[]): AsyncGenerator<Row[]> {
  const cursor = client.query(new Cursor<Row>(text, values));
  try {
    for (;;) {
      const rows = await cursor.read(exportBatchRows);
      if (rows.length === 0) return;
      yield rows;
    }
  } finally {
    await cursor.close();
  }
}

/** Runs `work` on a snapshot of the site's data, on a connection of its own from `pool`. */
export async function withExportSnapshot<T>(pool: pg.Pool, selection: ExportSelection, work: (snapshot: ExportSnapshot) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failed = false;
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await client.query<{ now: Date }>('SELECT now()');
    const snapshot: ExportSnapshot = {
      transactionTime: rows[0]!.now,
      async *storedResources(type) {
        if (!isStoredResourceType(type)) throw new Error(`${type} is not a stored resource type`);
        const where = ['site_id = $1', 'resource_type = $2'];
        const values: unknown[] = [selection.siteId, type];
        // The patient compartment (compartmentdefinition-patient.html): a patient, and every
        // resource whose subject or patient is one.
        if (selection.level === 'patient' && type !== 'Patient') where.push('patient_id IS NOT NULL');
        if (selection.since) {
          values.push(selection.since);
          where.push(`last_updated > $${values.length}`);
        }
        // content as text: PostgreSQL renders the JSON, and it goes to the file as it is.
        for await (const batch of batches<{ line: string }>(client, `SELECT content::text AS line FROM clinical_resource WHERE ${where.join(' AND ')}`, values)) {
          yield batch.map((row) => row.line);
        }
      },
      async *imagingReports() {
        const where = ['r.site_id = $1', 's.site_id = $1'];
        const values: unknown[] = [selection.siteId];
        if (selection.level === 'patient') where.push('s.patient_id IS NOT NULL');
        if (selection.since) {
          values.push(selection.since);
          where.push(`r.updated_at > $${values.length}`);
        }
        for await (const batch of batches<Record<string, unknown>>(client, `${reportSelect} WHERE ${where.join(' AND ')}`, values)) {
          yield batch.map(toReport);
        }
      },
      rows<Row>(text: string, values: unknown[]) {
        return batches<Row>(client, text, values);
      },
    };
    const result = await work(snapshot);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    failed = true;
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release(failed ? true : undefined);
  }
}
