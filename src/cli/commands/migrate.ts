import { migrate } from '../../storage/migrations.ts';
import type { CommandContext } from '../command.ts';
import { print } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export async function migrateCommand({ json }: CommandContext): Promise<void> {
  const report = await withDatabase((db) => migrate(db));
  print({ applied: report.applied, already_applied: report.alreadyApplied }, json, () =>
    report.applied.length > 0 ? `applied: ${report.applied.join(', ')}` : `the database is up to date (${report.alreadyApplied} migrations)`,
  );
}
