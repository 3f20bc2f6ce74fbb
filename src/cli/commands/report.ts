import { completeReport, createReport, updateDraft, type ImagingReport } from '../../domain/imaging/reports.ts';
import { resolveSite, siteContextFor, type Site } from '../../domain/sites/sites.ts';
import { resolveUser } from '../../domain/users/users.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Queryable } from '../../storage/database.ts';
import type { CommandContext, CommandOptions } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, print } from '../output.ts';
import { integerOption } from '../switches.ts';
import { withDatabase } from '../with-database.ts';

function present(report: ImagingReport) {
  return {
    id: report.id,
    status: report.status,
    version: report.version,
    study_uid: report.studyInstanceUid,
    patient_id: report.patientId,
    author_user_id: report.authorUserId,
    created_at: report.createdAt,
    completed_at: report.completedAt,
  };
}

/** --author: a user of the site (another site's user is "not found", as everywhere). */
async function authorOf(db: Queryable, site: Site, options: CommandOptions): Promise<string | undefined> {
  const authorOption = options.optional('author');
  if (!authorOption) return undefined;
  const author = await resolveUser(db, authorOption);
  if (author.siteId !== site.id) throw new DomainError('not-found', `no user with id or e-mail "${authorOption}" in site ${site.name}`);
  return author.id;
}

export async function reportCommand({ action, options, positionals, json }: CommandContext): Promise<void> {
  if (action === 'update' || action === 'complete') {
    const reportId = positionals[0];
    if (!reportId) throw new UsageError(`report ${action} needs the report id: report ${action} REPORT_ID --site SITE ...`);
    // --version: the version the text was written against (a report changed since is refused).
    const expectedVersion = integerOption(options, 'version');
    const text = action === 'update' ? options.required('text') : options.optional('text');
    const report = await withDatabase(async (db) => {
      const site = await resolveSite(db, options.required('site'));
      const authorUserId = await authorOf(db, site, options);
      const context = siteContextFor(site, authorUserId ? { kind: 'user', userId: authorUserId } : { kind: 'operator' });
      const versioned = expectedVersion !== undefined ? { expectedVersion } : {};
      return action === 'update'
        ? updateDraft(db, context, reportId, { text: text!, ...versioned })
        : completeReport(db, context, reportId, { ...(text !== undefined ? { text } : {}), ...(authorUserId ? { authorUserId } : {}), ...versioned });
    });
    const out = present(report);
    print(out, json, () => formatRecord(out));
    return;
  }
  const status = options.optional('status') ?? 'draft';
  if (status !== 'draft' && status !== 'completed') throw new UsageError('--status must be draft or completed');
  const report = await withDatabase(async (db) => {
    const site = await resolveSite(db, options.required('site'));
    const authorUserId = await authorOf(db, site, options);
    const context = siteContextFor(site, authorUserId ? { kind: 'user', userId: authorUserId } : { kind: 'operator' });
    return createReport(db, context, { studyInstanceUid: options.required('study'), text: options.required('text'), status, ...(authorUserId ? { authorUserId } : {}) });
  });
  const out = present(report);
  print(out, json, () => formatRecord(out));
}
