import { TransientStorageError } from '../../storage/errors.ts';

// File-system failures that pass: the sender should retry later (PS3.4 B.2.3 "Out of Resources").
const resourceErrorCodes = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN', 'EROFS']);

/** A failure to store that passes (database unavailable, disk full): whatever the surface, "retry later". */
export function isResourceFailure(error: unknown): boolean {
  if (error instanceof TransientStorageError) return true;
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && resourceErrorCodes.has(code);
}
