/** A mistake in how the command was called (exit status 2, with usage). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
