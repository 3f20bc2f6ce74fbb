/**
 * The database could not be reached or refused work for a reason that passes (server down,
 * restarting, too many connections). Surfaces must turn this into "retry later" (HTTP 503,
 * HL7 AR, DIMSE 0xA700), never into a permanent rejection: DESIGN.md section 2.
 */
export class TransientStorageError extends Error {
  override readonly name = 'TransientStorageError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

// SQLSTATE classes and codes that say "try again later" rather than "this request is wrong".
// https://www.postgresql.org/docs/15/errcodes-appendix.html
const transientSqlStates = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '53100', // disk_full
  '53200', // out_of_memory
  '58030', // io_error
]);

const transientNodeCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN']);

export function isTransientDatabaseError(error: unknown): boolean {
  if (error instanceof TransientStorageError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Class 08 is connection trouble, except 08P01 (protocol violation): that is a bug of ours,
    // and reporting it as "retry later" would hide it behind endless retries.
    if (transientSqlStates.has(code) || (code.startsWith('08') && code !== '08P01')) return true;
    if (transientNodeCodes.has(code)) return true;
    // A Unix socket that is not there: the server is down (what ECONNREFUSED is over TCP).
    if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'connect') return true;
  }
  // node-postgres reports a dropped socket and pool exhaustion without a code.
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i.test(
    error.message,
  );
}

/** Serialization failures and deadlocks: the transaction helper retries these itself. */
export function isRetryableTransactionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '40001' || code === '40P01';
}

/** A unique-constraint violation; `constraint` names which one. */
export function uniqueViolation(error: unknown): { constraint: string } | undefined {
  const e = error as { code?: unknown; constraint?: unknown } | undefined;
  if (e?.code === '23505') return { constraint: typeof e.constraint === 'string' ? e.constraint : '' };
  return undefined;
}

/** A statement cancelled by its statement_timeout: the work asked for was too costly. */
export class StatementTimeoutError extends Error {
  override readonly name = 'StatementTimeoutError';
  readonly timeoutMs: number;
  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(`the statement ran longer than ${timeoutMs} ms and was cancelled`, options);
    this.timeoutMs = timeoutMs;
  }
}

/** 57014 query_canceled with the statement_timeout message (a cancel request has another). */
export function isStatementTimeout(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  return e?.code === '57014' && typeof e.message === 'string' && /statement timeout/.test(e.message);
}
