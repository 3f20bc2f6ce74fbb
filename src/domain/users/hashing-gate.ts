/**
 * Bounds how many password hashes run at once in this process. scrypt runs on libuv's thread
 * pool (four threads by default), the pool that also writes and fsyncs DICOM files: unbounded
 * sign-in bursts would queue those writes behind hashes (issue 26 point 4 measured a C-STORE
 * going from 50 ms to over 10 s under 300 sign-ins). Beyond the queue bound a hash is refused at
 * once with ServiceBusyError, which every surface answers as "retry later" (HTTP 503).
 */
import { ServiceBusyError } from '../errors.ts';

/** Hashes running at once: leaves at least two of libuv's four threads for file I/O. */
export const concurrentHashes = 2;
/** Hashes waiting for a slot; past this, refused (each takes tens of milliseconds). */
export const waitingHashes = 32;

let running = 0;
const waiting: (() => void)[] = [];

export async function withHashingSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= concurrentHashes) {
    if (waiting.length >= waitingHashes) throw new ServiceBusyError('too many password checks are under way; retry in a moment');
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running += 1;
  }
  try {
    return await work();
  } finally {
    // The slot passes straight to the next waiter, so `running` only drops when none waits.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}
