import { TransientStorageError } from '../../storage/errors.ts';

/**
 * New data refused because a folder the service writes to has less free space than the floor
 * (CG_MIN_FREE_DISK, CG_MIN_FREE_DISK_PERCENT). A TransientStorageError: every surface already
 * turns those into its retry-later answer (HL7 AR, HTTP 503, DIMSE 0xA700), before anything is written.
 */
export class LowDiskSpaceError extends TransientStorageError {
  /** Seconds a sender is told to wait (Retry-After): free space does not come back in a second. */
  readonly retryAfterSeconds = 30;
  constructor() {
    super('free disk space is below the service\'s floor; nothing was stored; retry later');
  }
}
