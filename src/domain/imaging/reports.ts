/**
 * The site's internal imaging reports (issue 5 point 7): one or more per study, written as a
 * draft, then completed. Completion records the author and the time, and freezes the text: a
 * completed report never changes again (a correction is a new report). These are what the FHIR
 * DiagnosticReport view shows (completed: final; draft: preliminary).
 */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../storage/database.ts';
import { recordAudit } from '../audit/audit.ts';
import { DomainError } from '../errors.ts';
import { inTransaction } from '../records/store-transaction.ts';
import type { SiteContext } from '../site-context.ts';
import { cleanText } from './dicom-values.ts';
import { readReport, type ImagingReport, type ReportStatus } from './report-queries.ts';
import { isUuid } from '../uuid.ts';

export { maxReportPageSize, readReport, searchReports } from './report-queries.ts';
export type { ImagingReport, ReportSearch, ReportStatus } from './report-queries.ts';

/** Characters; a radiology report is a few pages at most. */
export const maxReportTextLength = 100_000;

export interface CreateReportInput {
  studyInstanceUid: string;
  text: string;
  status?: ReportStatus;
  /** Defaults to the acting user (API key or session); the CLI passes --author. */
  authorUserId?: string;
}

/** Each write runs in one transaction with its audit event (joining the caller's, if any). */
export async function createReport(db: Queryable, site: SiteContext, input: CreateReportInput): Promise<ImagingReport> {
  return inTransaction(db, (tx) => insertReport(tx, site, input));
}

async function insertReport(db: Queryable, site: SiteContext, input: CreateReportInput): Promise<ImagingReport> {
  const status = input.status ?? 'draft';
  if (status !== 'draft' && status !== 'completed') {
    throw new DomainError('invalid', 'status must be draft or completed', [{ message: 'status must be draft or completed', location: 'status' }]);
  }
  const text = checkText(input.text, status);
  const studyInstanceUid = cleanText(input.studyInstanceUid, 128) ?? '';
  const author = await resolveAuthor(db, site, input.authorUserId);
  const id = randomUUID();
  // One statement: the report is written only if the study exists in this site.
  const inserted = await db.query(
    `INSERT INTO imaging_report (site_id, id, study_instance_uid, status, text, author_user_id, completed_at)
     SELECT $1, $2, s.study_instance_uid, $4, $5, $6, CASE WHEN $4 = 'completed' THEN now() END
     FROM imaging_study s WHERE s.site_id = $1 AND s.study_instance_uid = $3`,
    [site.siteId, id, studyInstanceUid, status, text, author],
  );
  if (inserted.rowCount === 0) {
    throw new DomainError('not-found', `no study ${studyInstanceUid} in this site`, [{ message: 'no such study', location: 'studyInstanceUid' }]);
  }
  await recordAudit(db, { siteId: site.siteId, actor: site.actor, action: `report.create`, targetType: 'imaging-report', targetId: id, details: { studyInstanceUid, status } });
  return (await readReport(db, site, id))!;
}

/** Replaces a draft's text. A completed report is a 'conflict'; a stale version 'precondition-failed'. */
export async function updateDraft(
  db: Queryable,
  site: SiteContext,
  id: string,
  input: { text: string; expectedVersion?: number },
): Promise<ImagingReport> {
  return inTransaction(db, (tx) => replaceDraftText(tx, site, id, input));
}

async function replaceDraftText(db: Queryable, site: SiteContext, id: string, input: { text: string; expectedVersion?: number }): Promise<ImagingReport> {
  const text = checkText(input.text, 'draft');
  const current = await requireReport(db, site, id);
  if (current.status === 'completed') throw completedConflict(id);
  const updated = await db.query(
    `UPDATE imaging_report SET text = $3, updated_at = now(), version = version + 1
     WHERE site_id = $1 AND id = $2 AND status = 'draft' AND version = $4`,
    [site.siteId, id, text, input.expectedVersion ?? current.version],
  );
  if (updated.rowCount === 0) await explainMiss(db, site, id, input.expectedVersion);
  return (await readReport(db, site, id))!;
}

/**
 * Completes a draft: records the author (given, else the acting user) and the completion time,
 * optionally with a last text. From then on the text is frozen.
 */
export async function completeReport(
  db: Queryable,
  site: SiteContext,
  id: string,
  input: { text?: string; authorUserId?: string; expectedVersion?: number } = {},
): Promise<ImagingReport> {
  return inTransaction(db, (tx) => markCompleted(tx, site, id, input));
}

async function markCompleted(
  db: Queryable,
  site: SiteContext,
  id: string,
  input: { text?: string; authorUserId?: string; expectedVersion?: number },
): Promise<ImagingReport> {
  const current = await requireReport(db, site, id);
  if (current.status === 'completed') throw completedConflict(id);
  const text = checkText(input.text ?? current.text, 'completed');
  const author = (await resolveAuthor(db, site, input.authorUserId)) ?? current.authorUserId;
  const updated = await db.query(
    `UPDATE imaging_report SET status = 'completed', text = $3, author_user_id = $4, completed_at = now(),
       updated_at = now(), version = version + 1
     WHERE site_id = $1 AND id = $2 AND status = 'draft' AND version = $5`,
    [site.siteId, id, text, author, input.expectedVersion ?? current.version],
  );
  if (updated.rowCount === 0) await explainMiss(db, site, id, input.expectedVersion);
  await recordAudit(db, { siteId: site.siteId, actor: site.actor, action: 'report.complete', targetType: 'imaging-report', targetId: id, details: { authorUserId: author } });
  return (await readReport(db, site, id))!;
}

function checkText(text: unknown, status: ReportStatus): string {
  if (typeof text !== 'string') throw new DomainError('invalid', 'text must be a string', [{ message: 'text must be a string', location: 'text' }]);
  if (text.length > maxReportTextLength) {
    throw new DomainError('too-large', `text is longer than ${maxReportTextLength} characters`, [{ message: 'text is too long', location: 'text' }]);
  }
  if (text.includes('\u0000')) throw new DomainError('invalid', 'text contains a NUL character', [{ message: 'text contains a NUL character', location: 'text' }]);
  if (status === 'completed' && text.trim().length === 0) {
    throw new DomainError('invalid', 'a completed report needs text', [{ message: 'a completed report needs text', location: 'text' }]);
  }
  return text;
}

/** The author must be an active user of this site; without one, the acting user if any. */
async function resolveAuthor(db: Queryable, site: SiteContext, authorUserId: string | undefined): Promise<string | null> {
  const candidate = authorUserId ?? actingUserId(site);
  if (candidate === undefined) return null;
  const known = isUuid(candidate)
    ? await db.query('SELECT 1 FROM app_user WHERE site_id = $1 AND id = $2 AND active', [site.siteId, candidate])
    : { rowCount: 0 };
  if (known.rowCount === 0) {
    throw new DomainError('invalid', 'the author is not an active user of this site', [{ message: 'unknown author', location: 'authorUserId' }]);
  }
  return candidate;
}

function actingUserId(site: SiteContext): string | undefined {
  return site.actor.kind === 'api-key' || site.actor.kind === 'user' ? site.actor.userId : undefined;
}

async function requireReport(db: Queryable, site: SiteContext, id: string): Promise<ImagingReport> {
  const report = await readReport(db, site, id);
  if (!report) throw new DomainError('not-found', `no report ${id} in this site`);
  return report;
}

function completedConflict(id: string): DomainError {
  return new DomainError('conflict', `report ${id} is completed; its text can no longer change`);
}

/** The guarded UPDATE matched nothing: say why (completed meanwhile, or a stale version). */
async function explainMiss(db: Queryable, site: SiteContext, id: string, expectedVersion: number | undefined): Promise<never> {
  const now = await requireReport(db, site, id);
  if (now.status === 'completed') throw completedConflict(id);
  throw new DomainError(
    'precondition-failed',
    expectedVersion !== undefined ? `report ${id} is at version ${now.version}, not ${expectedVersion}` : `report ${id} changed meanwhile; retry`,
  );
}
