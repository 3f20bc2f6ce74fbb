import { DomainError } from '../domain/errors.ts';

/** A mistake in how the command was called (exit status 2, with usage). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * What --json prints on stderr when a command fails: a domain refusal keeps its code (not-found,
 * conflict, invalid...) and its issues, so a script can tell them apart without parsing text.
 */
export function errorDocument(error: unknown, fallbackCode: string, message: string): { code: string; message: string; issues?: unknown[] } {
  if (error instanceof DomainError) return { code: error.code, message, ...(error.issues.length > 0 ? { issues: error.issues } : {}) };
  return { code: fallbackCode, message };
}
