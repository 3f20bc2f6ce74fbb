import { isDomainError } from '../../domain/errors.ts';
import { TransientStorageError } from '../../storage/errors.ts';
import type { DimseResult } from '../dimse/dimse-result.ts';
import { status } from '../dimse/status.ts';

// File-system failures that pass: the sender should retry later (PS3.4 B.2.3 "Out of Resources").
const resourceErrorCodes = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN', 'EROFS']);

export function isResourceFailure(error: unknown): boolean {
  if (error instanceof TransientStorageError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && resourceErrorCodes.has(code);
}

/**
 * The one mapping of C-STORE failures to DIMSE statuses (PS3.4 B.2.3): temporary conditions
 * (database unavailable, disk full) are 0xA700 so the modality retries; a dataset the domain
 * refuses is 0xC000; anything unexpected is a processing failure, with no internals in the comment.
 */
export function storeFailure(error: unknown): DimseResult {
  if (isResourceFailure(error)) return { status: status.outOfResources, errorComment: 'Out of resources: retry later' };
  if (isDomainError(error, 'invalid')) return { status: status.cannotUnderstand, errorComment: error.message };
  return { status: status.processingFailure, errorComment: 'Processing failure' };
}
