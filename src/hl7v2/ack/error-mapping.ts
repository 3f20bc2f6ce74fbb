/**
 * The one place where failures become HL7 acknowledgement codes (HL7 v2.5.1 section 2.9.2 and
 * table 0008): content problems are AE, refusals of the kind of message and failures the sender
 * should retry are AR. A database that is unavailable is always AR, never AE, so that the sender
 * keeps the message and sends it again (DESIGN.md section 2).
 */
import { isDomainError, type DomainErrorCode } from '../../domain/errors.ts';
import { LowDiskSpaceError } from '../../platform/disk-space/low-disk-space-error.ts';
import { TransientStorageError, isTransientDatabaseError } from '../../storage/errors.ts';
import { BatchHaltedError } from '../intake/batch-intake.ts';
import { errorCodes, error, type ErrorCode, type Problem } from '../problems.ts';
import type { AckCode } from './build-ack.ts';

export interface FailureAnswer {
  code: AckCode;
  text: string;
  problems: Problem[];
  /** True when the sender should retry: the message must not be logged as processed. */
  retry: boolean;
}

const domainCodes: Record<DomainErrorCode, { ack: AckCode; code: ErrorCode }> = {
  invalid: { ack: 'AE', code: errorCodes.dataTypeError },
  'business-rule': { ack: 'AE', code: errorCodes.dataTypeError },
  'not-found': { ack: 'AE', code: errorCodes.unknownKeyIdentifier },
  conflict: { ack: 'AE', code: errorCodes.duplicateKeyIdentifier },
  'precondition-failed': { ack: 'AR', code: errorCodes.applicationRecordLocked },
  unsupported: { ack: 'AR', code: errorCodes.unsupportedMessageType },
  'too-large': { ack: 'AE', code: errorCodes.dataTypeError },
};

export function answerForFailure(failure: unknown): FailureAnswer {
  if (failure instanceof LowDiskSpaceError) {
    return {
      code: 'AR',
      text: 'temporarily unable to store the message (disk nearly full); send it again later',
      problems: [error(errorCodes.applicationInternalError, 'free disk space is below the service\'s floor; nothing was stored; retry later')],
      retry: true,
    };
  }
  if (failure instanceof BatchHaltedError) {
    return {
      code: 'AR',
      text: 'not processed; send it again after the earlier message of its batch',
      problems: [error(errorCodes.applicationInternalError, `${failure.message}; nothing was stored; retry later`)],
      retry: true,
    };
  }
  if (failure instanceof TransientStorageError || isTransientDatabaseError(failure)) {
    return {
      code: 'AR',
      text: 'temporarily unable to store the message; send it again later',
      problems: [error(errorCodes.applicationInternalError, 'the database is temporarily unavailable; nothing was stored; retry later')],
      retry: true,
    };
  }
  if (isDomainError(failure)) {
    const mapped = domainCodes[failure.code];
    return {
      code: mapped.ack,
      text: failure.message,
      problems: failure.issues.map((issue) => error(mapped.code, issue.location ? `${issue.message} (${issue.location})` : issue.message)),
      retry: mapped.ack === 'AR',
    };
  }
  // Not the sender's fault and not known to pass: AR so the message is kept and retried, and
  // no internals in the answer.
  return {
    code: 'AR',
    text: 'internal error; the message was not stored',
    problems: [error(errorCodes.applicationInternalError, 'an internal error stopped processing; nothing was stored')],
    retry: true,
  };
}
