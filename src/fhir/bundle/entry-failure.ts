import { mapError } from '../../platform/http/error-mapping.ts';
import { HttpProblem } from '../../platform/http/http-problem.ts';

/**
 * A transaction fails whole on the first entry that fails: its OperationOutcome names the entry
 * (its index and fullUrl) and says why, each issue located in the Bundle (Bundle.entry[i]...).
 * Failures of the service itself (database unreachable, a bug) pass through unchanged.
 */
export function entryFailure(entry: { index: number; fullUrl?: string }, error: unknown): unknown {
  if (error instanceof HttpProblem && (error.details as { entryIndex?: number } | undefined)?.entryIndex !== undefined) return error;
  const mapped = mapError(error);
  if (mapped.unexpected || mapped.statusCode >= 500) return error;
  const where = `entry ${entry.index}${entry.fullUrl !== undefined ? ` (${entry.fullUrl})` : ''}`;
  const root = `Bundle.entry[${entry.index}]`;
  const details = mapped.details as { issues?: { message: string; location?: string }[] } | undefined;
  const issues = [
    { message: `${where}: ${mapped.message}`, location: root },
    ...(details?.issues ?? [])
      .filter((issue) => issue.message !== mapped.message || issue.location !== undefined)
      .map((issue) => ({ message: `${where}: ${issue.message}`, ...(issue.location ? { location: `${root}.resource.${issue.location.replace(/^[A-Z][A-Za-z]+\./, '')}` } : {}) })),
  ];
  return new HttpProblem(mapped.statusCode, mapped.code, `${where}: ${mapped.message}`, { details: { issues, entryIndex: entry.index }, ...(mapped.headers ? { headers: mapped.headers } : {}) });
}
