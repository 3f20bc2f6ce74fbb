/**
 * Runs one claimed export job: reads the snapshot type by type through the cursor and writes each
 * type's NDJSON files as the rows come (export-files.ts), renewing the job's lease as it goes.
 * Bulk Data Access IG v2.0.0, export.html#bulk-data-output-file-request.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { BulkExportSettings } from '../../config/bulk-export.ts';
import { dataAccessRecorder } from '../../domain/audit/data-access.ts';
import { attemptFolderName, jobFolder, NdjsonFileSeries } from '../../domain/bulk-export/export-files.ts';
import { completeExport, releaseExportLease, renewExportLease, startExportAttempt, type ExportJob, type ExportOutputFile } from '../../domain/bulk-export/export-jobs.ts';
import { withExportSnapshot } from '../../domain/bulk-export/export-reader.ts';
import type { Database } from '../../storage/database.ts';
import { diagnosticReportOf } from '../../domain/imaging/diagnostic-report-view.ts';

/** The job is no longer this worker's: it was cancelled, or taken over after a stall. */
export class ExportLeaseLost extends Error {
  override readonly name = 'ExportLeaseLost';
}

export interface ExportRun {
  database: Database;
  settings: BulkExportSettings;
  owner: string;
  logger: Logger;
  /** True once this process is stopping: the job is given back between two batches. */
  stopping(): boolean;
}

export async function runExport(run: ExportRun, job: ExportJob): Promise<ExportOutputFile[] | undefined> {
  const { database, settings, owner } = run;
  const relative = attemptFolderName(job.attempts);
  const folder = join(jobFolder(settings.dir, job.siteId, job.id), relative);
  let written = 0;
  let lost = false;
  let renewing: Promise<void> | undefined;
  const renew = () => {
    renewing ??= renewExportLease(database, job, owner, settings.leaseSeconds, written)
      .then((held) => {
        if (!held) lost = true;
      })
      .catch((error: unknown) => run.logger.warn({ err: error, job: job.id }, 'export lease renewal failed; it is tried again'))
      .finally(() => {
        renewing = undefined;
      });
  };
  const heartbeat = setInterval(renew, Math.max(250, (settings.leaseSeconds * 1000) / 3));
  heartbeat.unref();
  const series: NdjsonFileSeries[] = [];
  try {
    return await withExportSnapshot(database.pool, { siteId: job.siteId, level: job.level, since: job.since }, async (snapshot) => {
      if (!(await startExportAttempt(database, job, owner, snapshot.transactionTime))) throw new ExportLeaseLost();
      for (const type of job.resourceTypes) {
        const files = new NdjsonFileSeries(folder, relative, type, settings.fileMaxBytes);
        series.push(files);
        const batches = type === 'DiagnosticReport'
          ? mapBatches(snapshot.imagingReports(), (report) => JSON.stringify(diagnosticReportOf(report)))
          : snapshot.storedResources(type);
        for await (const lines of readAhead(batches)) {
          if (lost) throw new ExportLeaseLost();
          if (run.stopping()) {
            await releaseExportLease(database, job, owner);
            throw new ExportLeaseLost();
          }
          await files.writeLines(lines);
          written += lines.length;
        }
        await files.close();
      }
      const output = series.flatMap((files, index) => files.files.map((file) => ({ type: job.resourceTypes[index]!, ...file })));
      await renewing;
      if (lost || !(await completeExport(database, job, owner, output, settings.retentionHours))) throw new ExportLeaseLost();
      auditExport(run, job, output);
      return output;
    });
  } catch (error) {
    await Promise.all(series.map((files) => files.abandon()));
    // This attempt's files are of no use to anyone: the job is gone, failed, or another worker's.
    await rm(folder, { recursive: true, force: true }).catch(() => {});
    if (error instanceof ExportLeaseLost) return undefined;
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Asks for the next batch before handing out this one, so that the database reads the next rows
 * while this batch is written to the file (the two waited for each other before). Two batches at
 * most are held, so memory stays bounded.
 */
async function* readAhead<T>(source: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = source.next();
  for (;;) {
    const result = await next;
    if (result.done) return;
    next = source.next();
    // A failure of the read ahead is thrown when it is awaited; until then it is not unhandled.
    next.catch(() => {});
    yield result.value;
  }
}

async function* mapBatches<T>(source: AsyncGenerator<T[]>, line: (item: T) => string): AsyncGenerator<string[]> {
  for await (const batch of source) yield batch.map(line);
}

/** One data access record per exported type: who asked, from where, the criteria, the count. */
function auditExport(run: ExportRun, job: ExportJob, output: ExportOutputFile[]): void {
  const query = job.requestUrl.split('?', 2)[1] ?? '';
  // A record that cannot be queued (the log's backlog is full) is in the process log instead.
  for (const type of job.resourceTypes) {
    const count = output.filter((file) => file.type === type).reduce((sum, file) => sum + file.count, 0);
    const access = {
      siteId: job.siteId,
      occurredAt: new Date(),
        userId: job.requestedByUser,
        keyId: job.requestedByKey,
        remoteAddress: job.requestedFrom,
        surface: 'fhir',
        interaction: 'export',
        resourceType: type,
        query: `${job.level === 'patient' ? 'Patient/' : ''}$export${query ? `?${query}` : ''} (job ${job.id})`,
        resourceIds: [],
        resourceCount: count,
        patientIds: [],
    } as const;
    try {
      dataAccessRecorder(run.database).record(access, run.logger);
    } catch (error) {
      run.logger.error({ err: error, dataAccess: access }, 'data access log write failed; the export is recorded in this log line');
    }
  }
}
