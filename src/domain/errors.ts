/**
 * The closed set of reasons a domain operation refuses. Each surface maps these codes to its own
 * wire format in one place (OperationOutcome, HL7 ACK, DIMSE status, JSON error).
 */
export const domainErrorCodes = [
  'invalid', // the input is malformed or breaks a rule of the model
  'not-found', // no such object in this site (also: it exists, but in another site)
  'conflict', // the object exists, or a state transition is not allowed
  'precondition-failed', // a version precondition (If-Match) does not hold
  'business-rule', // well-formed, but not acceptable for this site's data
  'unsupported', // a message type, interaction or option the service does not offer
  'too-large', // a body or value over its limit
] as const;

export type DomainErrorCode = (typeof domainErrorCodes)[number];

export interface DomainIssue {
  /** A human-readable explanation. */
  message: string;
  /** Where the problem is, in the surface's terms (FHIRPath, HL7 location, JSON field). */
  location?: string;
}

export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly code: DomainErrorCode;
  readonly issues: DomainIssue[];

  constructor(code: DomainErrorCode, message: string, issues: DomainIssue[] = []) {
    super(message);
    this.code = code;
    this.issues = issues.length > 0 ? issues : [{ message }];
  }
}

export function isDomainError(error: unknown, code?: DomainErrorCode): error is DomainError {
  return error instanceof DomainError && (code === undefined || error.code === code);
}

/**
 * Not a refusal of the input: the service is at a capacity bound right now and the same request
 * may succeed shortly (HTTP 503 with Retry-After).
 */
export class ServiceBusyError extends Error {
  override readonly name = 'ServiceBusyError';
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds = 1) {
    super(message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
