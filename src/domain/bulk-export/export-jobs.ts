/**
 * Bulk Data export jobs (Bulk Data Access IG v2.0.0, export.html), kept in PostgreSQL so that a
 * job outlives the process that accepted it and can be run by any worker of any node: a worker
 * claims a job with FOR UPDATE SKIP LOCKED and holds a lease it renews while it runs; a job whose
 * lease ran out (its worker died) is claimed again and restarted from the beginning.
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../storage/database.ts';
import type { SiteContext } from '../site-context.ts';
import { isUuid } from '../uuid.ts';

export type ExportLevel = 'system' | 'patient';
export type ExportState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface ExportOutputFile {
  type: string;
  /** File name inside the job's folder. */
  file: string;
  count: number;
  bytes: number;
}

export interface ExportJob {
  siteId: string;
  id: string;
  level: ExportLevel;
  resourceTypes: string[];
  since: Date | null;
  outputFormat: string;
  requestUrl: string;
  state: ExportState;
  requestedByUser: string | null;
  requestedByKey: string | null;
  requestedFrom: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  transactionTime: Date | null;
  expiresAt: Date | null;
  leaseOwner: string | null;
  attempts: number;
  progressCount: number;
  output: ExportOutputFile[];
  error: string | null;
}

export interface ExportRequest {
  level: ExportLevel;
  resourceTypes: string[];
  since: Date | undefined;
  outputFormat: string;
  requestUrl: string;
  requestedFrom: string | null;
}

const columns = `site_id, id, level, resource_types, since, output_format, request_url, state, requested_by_user, requested_by_key,
  requested_from, created_at, started_at, finished_at, transaction_time, expires_at, lease_owner, attempts, progress_count, output, error`;

function jobOf(row: Record<string, unknown>): ExportJob {
  return {
    siteId: row.site_id as string,
    id: row.id as string,
    level: row.level as ExportLevel,
    resourceTypes: row.resource_types as string[],
    since: row.since as Date | null,
    outputFormat: row.output_format as string,
    requestUrl: row.request_url as string,
    state: row.state as ExportState,
    requestedByUser: row.requested_by_user as string | null,
    requestedByKey: row.requested_by_key as string | null,
    requestedFrom: row.requested_from as string | null,
    createdAt: row.created_at as Date,
    startedAt: row.started_at as Date | null,
    finishedAt: row.finished_at as Date | null,
    transactionTime: row.transaction_time as Date | null,
    expiresAt: row.expires_at as Date | null,
    leaseOwner: row.lease_owner as string | null,
    attempts: row.attempts as number,
    progressCount: Number(row.progress_count),
    output: row.output as ExportOutputFile[],
    error: row.error as string | null,
  };
}

/**
 * Queues a job unless the site already has `jobsPerSite` queued or running ones (then undefined).
 * The site's row is locked for the count and the insert, so concurrent kick-offs of one site on
 * any node cannot both pass the limit.
 */
export async function queueExport(db: { transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> }, site: SiteContext, request: ExportRequest, jobsPerSite: number): Promise<ExportJob | undefined> {
  const { actor } = site;
  return db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM site WHERE id = $1 FOR UPDATE', [site.siteId]);
    const { rows: active } = await tx.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM bulk_export_job WHERE site_id = $1 AND state IN ('queued', 'running')",
      [site.siteId],
    );
    if ((active[0]?.n ?? 0) >= jobsPerSite) return undefined;
    const { rows } = await tx.query(
      `INSERT INTO bulk_export_job (site_id, id, level, resource_types, since, output_format, request_url, state, requested_by_user, requested_by_key, requested_from)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', $8, $9, $10) RETURNING ${columns}`,
      [
        site.siteId,
        randomUUID(),
        request.level,
        request.resourceTypes,
        request.since ?? null,
        request.outputFormat,
        request.requestUrl,
        actor.kind === 'api-key' || actor.kind === 'user' ? actor.userId : null,
        actor.kind === 'api-key' ? actor.keyId : null,
        request.requestedFrom,
      ],
    );
    return jobOf(rows[0]!);
  });
}

/** The site's job, or undefined (another site's id reads exactly like an unknown one). */
export async function readExport(db: Queryable, siteId: string, id: string): Promise<ExportJob | undefined> {
  if (!isUuid(id)) return undefined;
  const { rows } = await db.query(`SELECT ${columns} FROM bulk_export_job WHERE site_id = $1 AND id = $2`, [siteId, id]);
  return rows[0] ? jobOf(rows[0]) : undefined;
}

export interface ExportListEntry extends ExportJob {
  requestedByEmail: string | null;
}

/** The site's jobs, newest first (the administration app's list). */
export async function listExports(db: Queryable, siteId: string, limit = 100): Promise<ExportListEntry[]> {
  const { rows } = await db.query(
    `SELECT ${columns.replace(/(\w+)/g, 'j.$1')}, u.email AS requested_by_email
       FROM bulk_export_job j LEFT JOIN app_user u ON u.id = j.requested_by_user
      WHERE j.site_id = $1 ORDER BY j.created_at DESC LIMIT $2`,
    [siteId, limit],
  );
  return rows.map((row) => ({ ...jobOf(row), requestedByEmail: (row.requested_by_email as string | null) ?? null }));
}

/**
 * Removes the job (the IG's DELETE: cancel a running export, or drop a finished one); the caller
 * deletes its files. Returns false when the site has no such job.
 */
export async function deleteExport(db: Queryable, siteId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rowCount } = await db.query('DELETE FROM bulk_export_job WHERE site_id = $1 AND id = $2', [siteId, id]);
  return (rowCount ?? 0) > 0;
}

/**
 * Claims the oldest job of any site that is queued, or running under a lease that ran out.
 * SKIP LOCKED: workers polling at once each get a different job and never wait on one another.
 */
export async function claimExport(db: Queryable, owner: string, leaseSeconds: number): Promise<ExportJob | undefined> {
  const { rows } = await db.query(
    `UPDATE bulk_export_job j
        SET state = 'running', lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2),
            attempts = j.attempts + 1, started_at = coalesce(j.started_at, now()), progress_count = 0, output = '[]'
       FROM (SELECT site_id, id FROM bulk_export_job
              WHERE state IN ('queued', 'running') AND (lease_expires_at IS NULL OR lease_expires_at < now())
              ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED) AS claimable
      WHERE j.site_id = claimable.site_id AND j.id = claimable.id
      RETURNING ${columns.replace(/(\w+)/g, 'j.$1')}`,
    [owner, leaseSeconds],
  );
  return rows[0] ? jobOf(rows[0]) : undefined;
}

/**
 * Renews the lease and records progress. False when the job is no longer this worker's (it was
 * cancelled, or another worker took it over after this one stalled): the worker must stop.
 */
export async function renewExportLease(db: Queryable, job: ExportJob, owner: string, leaseSeconds: number, progressCount: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE bulk_export_job SET lease_expires_at = now() + make_interval(secs => $4), progress_count = $5
      WHERE site_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'running'`,
    [job.siteId, job.id, owner, leaseSeconds, progressCount],
  );
  return (rowCount ?? 0) > 0;
}

/** Records the snapshot instant of this attempt (the manifest's transactionTime). */
export async function startExportAttempt(db: Queryable, job: ExportJob, owner: string, transactionTime: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE bulk_export_job SET transaction_time = $4 WHERE site_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'running'`,
    [job.siteId, job.id, owner, transactionTime],
  );
  return (rowCount ?? 0) > 0;
}

/*
 * completeExport and failExport: the expiry is the site's export_retention_hours when it has one,
 * else `retentionHours` (the service-wide CG_EXPORT_RETENTION_HOURS).
 */
export async function completeExport(db: Queryable, job: ExportJob, owner: string, output: ExportOutputFile[], retentionHours: number): Promise<boolean> {
  const total = output.reduce((sum, file) => sum + file.count, 0);
  const { rowCount } = await db.query(
    `UPDATE bulk_export_job
        SET state = 'completed', finished_at = now(), expires_at = now() + make_interval(hours => coalesce((SELECT export_retention_hours FROM site WHERE id = $1), $5)), output = $4::jsonb,
            progress_count = $6, lease_owner = NULL, lease_expires_at = NULL
      WHERE site_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'running'`,
    [job.siteId, job.id, owner, JSON.stringify(output), retentionHours, total],
  );
  return (rowCount ?? 0) > 0;
}

export async function failExport(db: Queryable, job: ExportJob, owner: string, error: string, retentionHours: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE bulk_export_job
        SET state = 'failed', finished_at = now(), expires_at = now() + make_interval(hours => coalesce((SELECT export_retention_hours FROM site WHERE id = $1), $5)), error = $4, output = '[]',
            lease_owner = NULL, lease_expires_at = NULL
      WHERE site_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'running'`,
    [job.siteId, job.id, owner, error.slice(0, 2000), retentionHours],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * The site's export retention changed: its finished exports expire that many hours after they
 * finished (sooner or later than before); the clean-up reads only expires_at. Exports expire as
 * they were set when a site goes back to the service-wide value (unknown to the domain).
 */
export async function reviseExportExpiries(db: Queryable, siteId: string, retentionHours: number): Promise<void> {
  await db.query(
    'UPDATE bulk_export_job SET expires_at = finished_at + make_interval(hours => $2) WHERE site_id = $1 AND finished_at IS NOT NULL',
    [siteId, retentionHours],
  );
}

/** Finished jobs of any site past their expiry: the clean-up deletes their files, then them. */
export async function expiredExports(db: Queryable, limit: number): Promise<{ siteId: string; id: string }[]> {
  const { rows } = await db.query<{ site_id: string; id: string }>(
    'SELECT site_id, id FROM bulk_export_job WHERE expires_at < now() ORDER BY expires_at LIMIT $1',
    [limit],
  );
  return rows.map((row) => ({ siteId: row.site_id, id: row.id }));
}

/** Every job id of any site that still exists (the clean-up removes folders of none). */
export async function existingExportIds(db: Queryable, siteId: string): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM bulk_export_job WHERE site_id = $1', [siteId]);
  return new Set(rows.map((row) => row.id));
}

/** Gives the job back at once (this process is stopping): the next poll of any worker restarts it. */
export async function releaseExportLease(db: Queryable, job: ExportJob, owner: string): Promise<void> {
  await db.query(
    `UPDATE bulk_export_job SET lease_expires_at = now() - interval '1 second' WHERE site_id = $1 AND id = $2 AND lease_owner = $3 AND state = 'running'`,
    [job.siteId, job.id, owner],
  );
}
