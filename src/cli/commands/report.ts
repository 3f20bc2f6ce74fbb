import { createReport } from '../../domain/imaging/reports.ts';
import { resolveSite, siteContextFor } from '../../domain/sites/sites.ts';
import { resolveUser } from '../../domain/users/users.ts';
import { DomainError } from '../../domain/errors.ts';
import type { CommandContext } from '../command.ts';
import { UsageError } from '../cli-error.ts';
import { formatRecord, print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function reportCommand({ options, json }: CommandContext): Promise<void> {
  const status = options.optional('status') ?? 'draft';
  if (status !== 'draft' && status !== 'completed') throw new UsageError('--status must be draft or completed');
  const report = await withDatabase(async (db) => {
    const site = await resolveSite(db, options.required('site'));
    const authorOption = options.optional('author');
    let authorUserId: string | undefined;
    if (authorOption) {
      const author = await resolveUser(db, authorOption);
      // Another site's user is "not found" here, as everywhere.
      if (author.siteId !== site.id) throw new DomainError('not-found', `no user with id or e-mail "${authorOption}" in site ${site.name}`);
      authorUserId = author.id;
    }
    const context = siteContextFor(site, authorUserId ? { kind: 'user', userId: authorUserId } : { kind: 'operator' });
    return createReport(db, context, { studyInstanceUid: options.required('study'), text: options.required('text'), status, ...(authorUserId ? { authorUserId } : {}) });
  });
  const out = {
    id: report.id,
    status: report.status,
    study_uid: report.studyInstanceUid,
    patient_id: report.patientId,
    author_user_id: report.authorUserId,
    created_at: report.createdAt,
    completed_at: report.completedAt,
  };
  print(out, json, () => formatRecord(out));
}
